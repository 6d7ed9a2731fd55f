#include "trainsim/explore/charts.hpp"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <utility>

#include "trainsim/common/text.hpp"
#include "trainsim/explore/goodput.hpp"
#include "trainsim/framework/framework.hpp"
#include "trainsim/report/html_report.hpp"
#include "trainsim/report/line_chart.hpp"
#include "trainsim/simulation.hpp"

namespace trainsim {
namespace {

// What a row's status says to a reader.
std::string status_text(const PlanOutcome& o) {
  switch (o.status) {
    case PlanStatus::ok: return "simulated";
    case PlanStatus::out_of_memory: return "out of memory";
    case PlanStatus::invalid: return "invalid plan";
  }
  return "?";
}

std::string fixed(const char* format, double v) { return format_number(format, v); }

// The metric columns every page's table shares, and their cells for one outcome: empty
// where the row did not simulate, but the memory model's peak also for an out-of-memory row.
// The bubble cell holds both figures (README "Bubble: two figures").
const std::vector<std::string> kMetricColumns = {"status", "step time", "tokens/s per device", "MFU",
                                                 "bubble: mean over stages / critical stage", "peak memory / HBM"};
std::vector<std::string> metric_cells(const PlanOutcome& o) {
  const bool ok = o.status == PlanStatus::ok;
  std::string memory;
  if (o.peak_memory_bytes > 0)
    memory = fixed("%.1f", o.peak_memory_bytes / kBytesPerGiB) + " / " + fixed("%.0f", o.hbm_bytes / kBytesPerGiB) + " GiB";
  return {status_text(o),
          ok ? fixed("%.3f", o.step_time_s) + " s" : "",
          ok ? fixed("%.0f", o.tokens_per_s_per_device) : "",
          ok ? fixed("%.1f", 100 * o.mfu) + " %" : "",
          ok ? fixed("%.1f", 100 * o.bubble_fraction) + " % / " + fixed("%.1f", 100 * o.critical_stage_bubble_fraction) + " %"
             : "",
          memory};
}

std::string counts_line(std::size_t ok, std::size_t oom, std::size_t invalid) {
  std::string s = std::to_string(ok) + " simulated";
  if (oom) s += ", " + std::to_string(oom) + " out of memory";
  if (invalid) s += ", " + std::to_string(invalid) + " invalid";
  return s;
}

// describe_plan and what it leaves out but a search varies: sequence parallelism and the
// optimizer's sharding (two top plans may differ only there).
std::string plan_text(const ParallelPlan& plan) {
  std::string s = describe_plan(plan);
  if (plan.sequence_parallel) s += ", sequence parallel";
  if (plan.use_distributed_optimizer)
    s += ", distributed optimizer";
  else if (plan.zero_stage > 0)
    s += ", ZeRO-" + std::to_string(plan.zero_stage);
  return s;
}

// 1e12 -> "1 trillion", 3e11 -> "300 billion": a token budget as people say it.
std::string token_count(double tokens) {
  if (tokens >= 1e12) return format_number("%.3g", tokens / 1e12) + " trillion";
  if (tokens >= 1e9) return format_number("%.3g", tokens / 1e9) + " billion";
  if (tokens >= 1e6) return format_number("%.3g", tokens / 1e6) + " million";
  return format_number("%.0f", tokens);
}

std::string setup_line(const Scenario& scenario) {
  return scenario.model.name + " on " + std::to_string(scenario.num_devices) + " \u00d7 " +
         scenario.hardware.device.name + " (" + scenario.hardware.name + "); " + plan_text(scenario.plan);
}

// Each labelled scenario simulated again, with its timeline, for the timeline sections.
std::string run_sections(const std::vector<std::pair<std::string, Scenario>>& labelled) {
  SimOptions options;
  options.record_timeline = true;
  std::vector<SimResult> results;
  results.reserve(labelled.size());
  for (const auto& item : labelled) results.push_back(simulate(item.second, options));
  std::vector<HtmlRun> runs;
  for (std::size_t i = 0; i < labelled.size(); ++i) runs.push_back({labelled[i].first, &labelled[i].second, &results[i]});
  return html_run_sections(runs);
}

// A comparison page: throughput bars (a failed item says why in place of its bar), the
// table of every row and the simulated ones' timelines.
struct ComparedItem {
  std::string label;
  std::string plan;  // "" when every row has the scenario's plan
  const PlanOutcome* outcome;
  Scenario scenario;  // the item's scenario (simulated again when ok)
};

std::string comparison_page(const Scenario& scenario, const std::string& title, const std::string& what,
                            const std::vector<ComparedItem>& items) {
  BarChart bars{"tokens/s per device", {}};
  const bool with_plan = std::any_of(items.begin(), items.end(), [](const ComparedItem& i) { return !i.plan.empty(); });
  HtmlTable table{{what}, "", {}, {}, ""};
  if (with_plan) table.columns.push_back("plan");
  table.columns.insert(table.columns.end(), kMetricColumns.begin(), kMetricColumns.end());
  table.columns.push_back("reason");
  table.align = std::string(with_plan ? "ll" : "l") + "lrrrrrl";
  std::vector<std::pair<std::string, Scenario>> simulated;
  std::size_t ok = 0, oom = 0, invalid = 0;
  for (const auto& item : items) {
    const PlanOutcome& o = *item.outcome;
    ok += o.status == PlanStatus::ok;
    oom += o.status == PlanStatus::out_of_memory;
    invalid += o.status == PlanStatus::invalid;
    bars.bars.push_back({item.label, o.tokens_per_s_per_device, o.status == PlanStatus::ok ? "" : status_text(o)});
    std::vector<std::string> row{item.label};
    if (with_plan) row.push_back(item.plan);
    const auto cells = metric_cells(o);
    row.insert(row.end(), cells.begin(), cells.end());
    row.push_back(o.reason);
    table.rows.push_back(std::move(row));
    table.failed.push_back(o.status != PlanStatus::ok);
    if (o.status == PlanStatus::ok) simulated.emplace_back(item.label, item.scenario);
  }
  std::string body = html_cards({{std::to_string(items.size()), what + "s compared"},
                                 {std::to_string(ok), "simulated", ok ? 0 : -1},
                                 {std::to_string(oom), "out of memory", oom ? -1 : 0},
                                 {std::to_string(invalid), "invalid", invalid ? -1 : 0}}) +
                     "\n";
  body += html_heading("Throughput per device") + svg_bar_chart(bars);
  body += html_heading("Every " + what) + html_table(table);
  body += run_sections(simulated);
  return html_page(title, setup_line(scenario) + ": " + counts_line(ok, oom, invalid), body, scenario.file);
}

}  // namespace

std::string scale_html(const Scenario& scenario, const ScaleResult& result) {
  LineChart per_device{"Throughput per device", "devices", "tokens/s per device", true, {}, {}};
  LineChart linearity{"Linearity against the smallest size that simulated", "devices", "linearity", true, {}, {}};
  LineSeries tokens{scenario.name, {}, false, {}};
  LineSeries lin{scenario.name, {}, false, {}};
  LineSeries threshold{format_number("%.1f", kLinearityThreshold) + ": poor scaling below", {}, true, {}};
  HtmlTable table{{"devices", "data parallel", "global batch"}, "", {}, {}, ""};
  table.columns.insert(table.columns.end(), kMetricColumns.begin(), kMetricColumns.end());
  table.columns.insert(table.columns.end(), {"linearity", "part of the step that grew most", "reason"});
  table.align = "rrr" + std::string("lrrrrr") + "rll";
  std::size_t ok = 0, oom = 0, invalid = 0;
  for (const auto& row : result.rows) {
    const auto& o = row.outcome;
    const bool simulated = o.status == PlanStatus::ok;
    ok += simulated;
    oom += o.status == PlanStatus::out_of_memory;
    invalid += o.status == PlanStatus::invalid;
    if (simulated) {
      tokens.points.emplace_back(row.num_devices, o.tokens_per_s_per_device);
      lin.points.emplace_back(row.num_devices, row.linearity);
    } else {
      tokens.missing.push_back({static_cast<double>(row.num_devices), status_text(o) + ": " + o.reason});
      lin.missing.push_back({static_cast<double>(row.num_devices), status_text(o) + ": " + o.reason});
    }
    threshold.points.emplace_back(row.num_devices, kLinearityThreshold);
    std::vector<std::string> cells{std::to_string(row.num_devices),
                                   row.data_parallel_size > 0 ? std::to_string(row.data_parallel_size) : "-",
                                   std::to_string(row.global_batch_size)};
    const auto metrics = metric_cells(o);
    cells.insert(cells.end(), metrics.begin(), metrics.end());
    cells.push_back(simulated && result.base_devices > 0 ? format_number("%.2f", row.linearity) : "");
    std::string grew;
    if (simulated && !row.grew_most.empty())
      grew = row.grew_most + " +" + format_number("%.1f", row.grew_most_s * 1e3) + " ms per step";
    cells.push_back(grew);
    cells.push_back(o.reason);
    table.rows.push_back(std::move(cells));
    table.failed.push_back(!simulated);
  }
  table.note = "Linearity at N devices: its throughput / (N / N0 \u00d7 the throughput at N0 devices), N0 = " +
               (result.base_devices > 0 ? std::to_string(result.base_devices) : std::string("none")) +
               " (the smallest size that simulated); below " + format_number("%.1f", kLinearityThreshold) +
               " a size keeps less than that share of linear scaling. The part that grew most is per size: of a "
               "device's step (mean over stages: forward, backward, recompute, exposed communication by kind, "
               "pipeline bubble, optimizer, data loading, host dispatch), the part whose time grew most over its "
               "linear-scaling value since N0 (strong scaling: the base's part x N0 / N); the parts' growths add up "
               "to (1 - linearity) x the step time.";
  per_device.series = {tokens};
  linearity.series = {lin, threshold};
  std::string body = html_cards({{std::to_string(result.rows.size()), "device counts"},
                                 {std::to_string(ok), "simulated", ok ? 0 : -1},
                                 {std::to_string(oom), "out of memory", oom ? -1 : 0},
                                 {std::to_string(invalid), "invalid", invalid ? -1 : 0}}) +
                     "\n";
  body += html_heading(per_device.title) + svg_line_chart(per_device);
  body += html_heading(linearity.title) + svg_line_chart(linearity);
  body += html_heading("Every device count") + html_table(table);
  return html_page(scenario.name + ": scaling",
                   plan_text(scenario.plan) + " on " + scenario.hardware.name +
                       ", grown by data parallelism (" +
                       (result.options.strong ? std::string("strong scaling: the global batch kept")
                                              : std::string("weak scaling: the global batch grows with it")) +
                       "): " + counts_line(ok, oom, invalid),
                   body, scenario.file);
}

std::string sweep_html(const SweepResult& result) {
  const std::string first_key = result.keys.empty() ? "" : result.keys.front();
  // Grid order (the first axis varies slowest), for the lines and the axis' values.
  std::vector<const SweepRow*> grid;
  for (const auto& row : result.rows) grid.push_back(&row);
  std::sort(grid.begin(), grid.end(), [](const SweepRow* a, const SweepRow* b) { return a->index < b->index; });
  std::vector<std::string> first_values;
  bool numeric = true;
  for (const auto* row : grid) {
    if (row->overrides.empty()) continue;
    const std::string& value = row->overrides.front().value;
    if (std::find(first_values.begin(), first_values.end(), value) == first_values.end()) first_values.push_back(value);
    char* end = nullptr;
    std::strtod(value.c_str(), &end);
    if (end == value.c_str() || *end != '\0') numeric = false;
  }
  LineChart chart{"Throughput per device against " + first_key, first_key, "tokens/s per device", numeric, {}, {}};
  if (!numeric) chart.x_categories = first_values;
  std::map<std::string, std::size_t> line_of;  // by the other axes' values
  auto x_of = [&](const std::string& value) {
    return numeric ? std::strtod(value.c_str(), nullptr)
                   : static_cast<double>(std::find(first_values.begin(), first_values.end(), value) -
                                         first_values.begin());
  };
  for (const auto* row : grid) {
    if (row->overrides.empty()) continue;
    std::string label;
    for (std::size_t i = 1; i < row->overrides.size(); ++i)
      label += (label.empty() ? "" : ", ") + row->overrides[i].key_path + "=" + row->overrides[i].value;
    if (label.empty()) label = "tokens/s per device";
    if (!line_of.count(label)) {
      line_of[label] = chart.series.size();
      chart.series.push_back({label, {}, false, {}});
    }
    auto& series = chart.series[line_of[label]];
    const double x = x_of(row->overrides.front().value);
    if (row->outcome.status == PlanStatus::ok)
      series.points.emplace_back(x, row->outcome.tokens_per_s_per_device);
    else
      series.missing.push_back({x, status_text(row->outcome) + ": " + row->outcome.reason});
  }
  for (auto& series : chart.series) std::sort(series.points.begin(), series.points.end());

  // The table: every row as the sweep ranks them (best first, then out of memory, then invalid).
  HtmlTable table{{"rank"}, "", {}, {}, ""};
  table.columns.insert(table.columns.end(), result.keys.begin(), result.keys.end());
  table.columns.insert(table.columns.end(), kMetricColumns.begin(), kMetricColumns.end());
  table.columns.push_back("reason");
  table.align = "r" + std::string(result.keys.size(), 'l') + "lrrrrrl";
  std::size_t ok = 0, oom = 0, invalid = 0;
  for (const auto& row : result.rows) {
    const bool simulated = row.outcome.status == PlanStatus::ok;
    ok += simulated;
    oom += row.outcome.status == PlanStatus::out_of_memory;
    invalid += row.outcome.status == PlanStatus::invalid;
    std::vector<std::string> cells{simulated ? std::to_string(ok) : ""};
    for (const auto& o : row.overrides) cells.push_back(o.value);
    const auto metrics = metric_cells(row.outcome);
    cells.insert(cells.end(), metrics.begin(), metrics.end());
    cells.push_back(row.outcome.reason);
    table.rows.push_back(std::move(cells));
    table.failed.push_back(!simulated);
  }
  std::string grid_text;
  for (const auto& key : result.keys) {
    std::vector<std::string> values;
    for (const auto* row : grid)
      for (const auto& o : row->overrides)
        if (o.key_path == key && std::find(values.begin(), values.end(), o.value) == values.end())
          values.push_back(o.value);
    std::string list;
    for (const auto& v : values) list += (list.empty() ? "" : ", ") + v;
    grid_text += (grid_text.empty() ? "" : " \u00d7 ") + key + " (" + list + ")";
  }
  std::vector<HtmlCard> cards{{std::to_string(result.rows.size()), "combinations"},
                              {std::to_string(ok), "simulated", ok ? 0 : -1},
                              {std::to_string(oom), "out of memory", oom ? -1 : 0},
                              {std::to_string(invalid), "invalid", invalid ? -1 : 0}};
  if (ok > 0) {
    const SweepRow& best = result.rows.front();
    std::string combination;
    for (const auto& o : best.overrides) combination += (combination.empty() ? "" : ", ") + o.key_path + "=" + o.value;
    cards.insert(cards.begin(), {{format_number("%.0f", best.outcome.tokens_per_s_per_device), "best tokens/s per device: " + combination, 1}});
  }
  std::string body = html_cards(cards) + "\n";
  body += html_heading(chart.title) + svg_line_chart(chart);
  body += html_heading("Every combination") + html_table(table);
  return html_page("Sweep of " + result.scenario_file, grid_text + ": " + counts_line(ok, oom, invalid), body,
                   result.scenario_file);
}

std::string schedule_comparison_html(const Scenario& scenario, const std::vector<ScheduleRow>& rows) {
  std::vector<ComparedItem> items;
  for (const auto& row : rows) items.push_back({row.choice.label, "", &row.outcome, with_schedule(scenario, row.choice)});
  return comparison_page(scenario, scenario.name + ": pipeline schedules compared", "schedule", items);
}

std::string framework_comparison_html(const Scenario& scenario, const std::vector<FrameworkRow>& rows) {
  std::vector<ComparedItem> items;
  for (const auto& row : rows)
    items.push_back({std::string(to_string(row.framework)) + (row.searched ? " (searched plan)" : ""),
                     plan_text(row.plan), &row.outcome, with_plan(scenario, scenario.num_devices, row.plan)});
  return comparison_page(scenario, scenario.name + ": frameworks compared", "framework", items);
}

std::string search_html(const Scenario& scenario, const SearchResult& result) {
  const long long checks_failed = result.enumerated - result.valid;
  const long long out_of_memory = result.valid - result.fit;
  const long long not_replayed = result.fit - result.replayed;
  HtmlTable funnel{{"plans", "count"}, "lr", {}, {}, ""};
  funnel.rows = {{"every combination of the searched axes", std::to_string(result.enumerated)},
                 {"failed the plan checks (divisibility, framework rules)", std::to_string(checks_failed)},
                 {"out of memory (memory model)", std::to_string(out_of_memory)},
                 {"fit, but their estimate ranked them below the replayed ones", std::to_string(not_replayed)},
                 {"replayed with the simulator", std::to_string(result.replayed)}};
  funnel.failed = {false, checks_failed > 0, out_of_memory > 0, false, false};
  if (result.framework_skipped > 0)
    funnel.note = std::to_string(result.framework_skipped) + " more combinations are not run by " +
                  to_string(result.framework) + " and were not enumerated.";

  BarChart bars{"tokens/s per device", {}};
  HtmlTable table{{"rank", "plan"}, "", {}, {}, ""};
  table.columns.insert(table.columns.end(), kMetricColumns.begin(), kMetricColumns.end());
  table.columns.insert(table.columns.end(), {"days to train", "cost"});
  table.align = "rl" + std::string("lrrrrr") + "rrl";
  // The search keeps only plans that simulated; a reason column only if one did not.
  const bool any_failed = std::any_of(result.best.begin(), result.best.end(),
                                      [](const SearchCandidate& c) { return c.outcome.status != PlanStatus::ok; });
  if (any_failed) table.columns.push_back("reason");
  std::vector<std::pair<std::string, Scenario>> shown;
  for (std::size_t i = 0; i < result.best.size(); ++i) {
    const SearchCandidate& c = result.best[i];
    const bool ok = c.outcome.status == PlanStatus::ok;
    const std::string rank = "#" + std::to_string(i + 1);
    bars.bars.push_back({rank + " " + plan_text(c.plan), c.outcome.tokens_per_s_per_device,
                         ok ? "" : status_text(c.outcome)});
    std::vector<std::string> cells{rank, plan_text(c.plan)};
    const auto metrics = metric_cells(c.outcome);
    cells.insert(cells.end(), metrics.begin(), metrics.end());
    cells.push_back(!ok || !(c.time_to_train_s > 0) ? "" : days_text(c.time_to_train_s));
    cells.push_back(ok && c.cost > 0 ? format_number("%.0f", c.cost) : ok ? "unknown price" : "");
    if (any_failed) cells.push_back(c.outcome.reason);
    table.rows.push_back(std::move(cells));
    table.failed.push_back(!ok);
    if (ok && shown.size() < 3) shown.emplace_back(rank, with_plan(scenario, result.devices, c.plan));
  }
  table.note = "Ranked by " + std::string(to_string(result.objective)) + "; days to train and cost for " +
               token_count(result.tokens) + " tokens" +
               (result.price_per_hour > 0 ? " at " + format_number("%.2f", result.price_per_hour) + " per device-hour"
                                          : std::string(" (the hardware file gives no price)")) +
               ".";
  std::string body = html_cards({{std::to_string(result.enumerated), "plans considered"},
                                 {std::to_string(result.fit), "valid and fit in memory"},
                                 {std::to_string(result.replayed), "replayed"},
                                 {result.best.empty() ? "none"
                                                      : format_number("%.0f", result.best.front().outcome.tokens_per_s_per_device),
                                  "best tokens/s per device", result.best.empty() ? -1 : 1}}) +
                     "\n";
  body += html_heading("Where the plans went") + html_table(funnel);
  if (result.best.empty()) {
    body += html_heading("Top plans") +
            html_note("No plan fits: every combination failed the plan checks or ran out of memory.");
  } else {
    body += html_heading("Throughput of the top plans") + svg_bar_chart(bars);
    body += html_heading("Top plans") + html_table(table);
  }
  body += run_sections(shown);
  return html_page(scenario.name + ": plan search on " + std::to_string(result.devices) + " devices",
                   scenario.model.name + " on " + scenario.hardware.name + ", plans " + to_string(result.framework) +
                       " runs, by " + to_string(result.objective),
                   body, scenario.file);
}

}  // namespace trainsim
