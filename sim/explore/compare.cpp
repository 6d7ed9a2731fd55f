#include "trainsim/explore/compare.hpp"

#include <tbb/parallel_for.h>

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "trainsim/common/error.hpp"
#include "trainsim/common/text.hpp"
#include "trainsim/common/version.hpp"
#include "trainsim/framework/framework.hpp"
#include "trainsim/plan/plan_check.hpp"
#include "trainsim/schedule/schedule.hpp"

namespace trainsim {

// The valid list comes from the schedule table, so a new schedule shows up here by itself.
std::string schedule_list_choices() {
  std::string out;
  for (PipelineSchedule s : all_schedules()) {
    out += to_string(s);
    if (s == PipelineSchedule::interleaved) out += "[:V] (V >= 2)";
    out += ", ";
  }
  return out + "vocab-1, vocab-2, interlaced (1F1B with plan.vocab_parallel so), comma-separated";
}

namespace {

ConfigError schedules_error(const std::string& problem) {
  return ConfigError(Diagnostic{SourceLocation{}, "--schedules", problem, schedule_list_choices()});
}

}  // namespace

std::vector<ScheduleChoice> parse_schedule_list(const std::string& text) {
  std::vector<ScheduleChoice> out;
  for (const std::string& item : split(text, ',')) {
    if (item.empty()) throw schedules_error("empty entry in '" + text + "'");
    ScheduleChoice c;
    c.label = item;
    const auto colon = item.find(':');
    const std::string name = item.substr(0, colon);
    std::optional<PipelineSchedule> schedule = schedule_from_name(name);
    if (const std::optional<VocabParallel> mode = vocab_parallel_from_name(name); mode && *mode != VocabParallel::none) {
      schedule = PipelineSchedule::one_f_one_b;
      c.vocab_parallel = *mode;
    }
    if (!schedule) throw schedules_error("unknown schedule '" + name + "'");
    c.schedule = *schedule;
    if (c.schedule == PipelineSchedule::interleaved) c.virtual_stages = 0;  // the scenario's own
    if (colon != std::string::npos) {
      if (c.schedule != PipelineSchedule::interleaved || c.vocab_parallel != VocabParallel::none)
        throw schedules_error("'" + item + "': only interleaved takes a number of virtual stages");
      const std::string v = item.substr(colon + 1);
      int value = 0;
      bool too_large = false;
      for (char ch : v) {
        if (ch < '0' || ch > '9') {
          value = -1;
          break;
        }
        if (value > 100000) too_large = true;
        else value = value * 10 + (ch - '0');
      }
      if (too_large && value >= 0)
        throw schedules_error("'" + item + "': V is past any pipeline's virtual stages (at most the layers per stage)");
      if (v.empty() || value < 2) throw schedules_error("'" + item + "': V must be an integer >= 2");
      c.virtual_stages = value;
    }
    // The same choice twice would be compared with itself ("1f1b beats 1f1b with probability 0.50").
    for (const ScheduleChoice& earlier : out)
      if (earlier.schedule == c.schedule && earlier.virtual_stages == c.virtual_stages &&
          earlier.vocab_parallel == c.vocab_parallel)
        throw schedules_error("'" + item + "' is listed twice" +
                              (earlier.label == item ? "" : " (as '" + earlier.label + "')") +
                              "; list each schedule once");
    out.push_back(c);
  }
  return out;
}

Scenario with_schedule(const Scenario& scenario, const ScheduleChoice& choice) {
  Scenario s = scenario;
  s.plan.schedule = choice.schedule;
  s.plan.vocab_parallel = choice.vocab_parallel;
  if (choice.schedule != PipelineSchedule::interleaved) {
    s.plan.virtual_pipeline_model_parallel_size = 1;
    s.plan.microbatch_group_size_per_vp_stage = 0;  // the interleaved schedule's (plan_check)
  } else if (choice.virtual_stages > 0) {
    s.plan.virtual_pipeline_model_parallel_size = choice.virtual_stages;
  } else if (s.plan.virtual_pipeline_model_parallel_size <= 1) {
    // `interleaved` without a count on a scenario that has none: the default rule, as the
    // loader applies it to a scenario file (one layer per model chunk).
    s.plan.virtual_pipeline_model_parallel_size = 0;
    derive_virtual_stages(s.plan, s.model.num_layers);
  }
  return s;
}

std::vector<ScheduleRow> compare_schedules(const Scenario& scenario, const std::vector<ScheduleChoice>& choices) {
  std::vector<ScheduleRow> rows(choices.size());
  tbb::parallel_for(std::size_t{0}, choices.size(), [&](std::size_t i) {
    rows[i].choice = choices[i];
    rows[i].outcome = evaluate_plan(with_schedule(scenario, choices[i]));
  });
  return rows;
}

std::string format_schedule_comparison(const Scenario& scenario, const std::vector<ScheduleRow>& rows,
                                       const ConfidenceData* confidence) {
  const auto& p = scenario.plan;
  std::string out = scenario.name + " on " + std::to_string(scenario.num_devices) + " x " +
                    scenario.hardware.device.name + ": PP " + std::to_string(p.pipeline_model_parallel_size) + ", " +
                    std::to_string(p.num_microbatches()) + " micro-batches per replica\n";
  std::size_t w = 8;
  for (const auto& r : rows) w = std::max(w, r.choice.label.size());
  char buf[256];
  // The two bubble figures (README "Bubble: two figures").
  std::snprintf(buf, sizeof buf, "%-*s  %8s  %8s  %12s  %6s  %10s  %s\n", static_cast<int>(w), "schedule", "step_s",
                "bubble%", "crit_bubble%", "MFU%", "tokens/s", "peak GiB per stage");
  out += buf;
  for (const auto& r : rows) {
    const PlanOutcome& o = r.outcome;
    std::string peaks;
    for (double b : o.stage_peak_memory_bytes) {
      std::snprintf(buf, sizeof buf, "%s%.1f", peaks.empty() ? "" : " ", b / kBytesPerGiB);
      peaks += buf;
    }
    if (o.status == PlanStatus::ok) {
      std::snprintf(buf, sizeof buf, "%-*s  %8.3f  %8.1f  %12.1f  %6.1f  %10.0f  ", static_cast<int>(w),
                    r.choice.label.c_str(), o.step_time_s, 100 * o.bubble_fraction,
                    100 * o.critical_stage_bubble_fraction, 100 * o.mfu, o.tokens_per_s);
      out += buf + peaks + "\n";
    } else {
      std::snprintf(buf, sizeof buf, "%-*s  ", static_cast<int>(w), r.choice.label.c_str());
      out += buf + std::string(to_string(o.status)) + ": " + o.reason;
      if (!peaks.empty()) out += " [" + peaks + "]";
      out += "\n";
    }
  }
  if (confidence) {
    // The fastest simulated row against each other one: is the gap inside the model's error?
    const ScheduleRow* best = nullptr;
    for (const auto& r : rows) {
      if (r.outcome.status == PlanStatus::ok && (!best || r.outcome.step_time_s < best->outcome.step_time_s)) best = &r;
    }
    std::vector<std::pair<std::string, double>> others;
    for (const auto& r : rows) {
      if (r.outcome.status == PlanStatus::ok && &r != best) others.emplace_back(r.choice.label, r.outcome.step_time_s);
    }
    if (best) {
      out += format_beats(error_interval(*confidence, with_schedule(scenario, best->choice)), best->choice.label,
                          best->outcome.step_time_s, others);
    }
  }
  return out;
}

std::string schedule_comparison_json(const Scenario& scenario, const std::vector<ScheduleRow>& rows) {
  nlohmann::ordered_json j;
  j["schema_version"] = kCompareSchemaVersion;
  j["trainsim_version"] = version();
  j["scenario"] = scenario.file;
  j["hardware"] = scenario.hardware.name;
  j["num_devices"] = scenario.num_devices;
  j["pipeline_model_parallel_size"] = scenario.plan.pipeline_model_parallel_size;
  j["rows"] = nlohmann::ordered_json::array();
  for (const auto& row : rows) {
    const PlanOutcome& o = row.outcome;
    nlohmann::ordered_json r;
    r["schedule"] = row.choice.label;
    r["virtual_pipeline_model_parallel_size"] =
        with_schedule(scenario, row.choice).plan.virtual_pipeline_model_parallel_size;
    r["status"] = to_string(o.status);
    r["reason"] = o.reason;
    add_outcome_metrics(r, o);
    r["stage_peak_memory_gib"] = nlohmann::ordered_json::array();
    for (double b : o.stage_peak_memory_bytes) r["stage_peak_memory_gib"].push_back(b / kBytesPerGiB);
    j["rows"].push_back(std::move(r));
  }
  return j.dump(2) + "\n";
}

std::vector<Framework> parse_framework_list(const std::string& text) {
  const auto error = [](const std::string& problem, const std::string& valid_start) {
    std::string names = framework_choices();
    std::replace(names.begin(), names.end(), '|', ',');
    return ConfigError(Diagnostic{SourceLocation{}, "--frameworks", problem, valid_start + names});
  };
  std::vector<Framework> out;
  for (const std::string& item : split(text, ',')) {
    if (item.empty()) throw error("empty entry in '" + text + "'", "frameworks, comma-separated, from ");
    const Framework framework = parse_framework_option(item, "--frameworks");
    if (std::find(out.begin(), out.end(), framework) != out.end())
      throw error("'" + item + "' is listed twice", "each framework once, from ");
    out.push_back(framework);
  }
  return out;
}

namespace {

// The breakdown columns: each the largest over the stages, as search reports its exposed times.
void fill_breakdown(FrameworkRow& row) {
  for (const StageBreakdown& st : row.outcome.stages) {
    row.compute_s = std::max(row.compute_s, st.forward_s + st.backward_s + st.recompute_s);
    row.tp_exposed_s = std::max(row.tp_exposed_s, st.tp_exposed_s);
    row.cp_exposed_s = std::max(row.cp_exposed_s, st.cp_exposed_s);
    row.ep_exposed_s = std::max(row.ep_exposed_s, st.ep_exposed_s);
    row.pp_exposed_s = std::max(row.pp_exposed_s, st.pp_exposed_s);
    row.dp_exposed_s = std::max(row.dp_exposed_s, st.dp_exposed_s);
    row.bubble_s = std::max(row.bubble_s, st.bubble_s);
    row.optimizer_s = std::max(row.optimizer_s, st.optimizer_s);
    row.host_s = std::max(row.host_s, st.host_s);
  }
}

// The framework's best plan by the plan search, or a row saying why there is none.
FrameworkRow searched_row(const Scenario& scenario, Framework framework, SearchOptions options) {
  FrameworkRow row;
  row.framework = framework;
  row.searched = true;
  options.framework = framework;
  options.top = 1;
  const SearchResult found = search_plans(scenario, options);
  if (!found.best.empty()) {
    row.plan = found.best.front().plan;
    row.outcome = found.best.front().outcome;
    return row;
  }
  row.plan = scenario.plan;
  row.plan.framework = framework;
  row.outcome.status = found.valid > 0 ? PlanStatus::out_of_memory : PlanStatus::invalid;
  row.outcome.reason = "no plan found: " + std::to_string(found.enumerated) + " enumerated, " +
                       std::to_string(found.valid) + " valid, " + std::to_string(found.fit) + " fit in memory, " +
                       std::to_string(found.replayed) + " replayed";
  return row;
}

// describe_plan plus how the optimizer state is sharded (the search chooses that too).
std::string plan_text(const ParallelPlan& p) {
  return describe_plan(p) + (p.use_distributed_optimizer ? std::string(", distributed optimizer")
                                                         : ", ZeRO-" + std::to_string(p.zero_stage));
}

std::string row_label(const FrameworkRow& row) { return std::string(to_string(row.framework)); }

const char* plan_source(const FrameworkRow& row) { return row.searched ? "search" : "scenario"; }

}  // namespace

std::vector<FrameworkRow> compare_frameworks(const Scenario& scenario, const std::vector<Framework>& frameworks,
                                             const SearchOptions* search) {
  std::vector<FrameworkRow> rows(frameworks.size());
  tbb::parallel_for(std::size_t{0}, frameworks.size(), [&](std::size_t i) {
    Scenario s = scenario;
    s.plan.framework = frameworks[i];
    derive_plan(s.plan, s.num_devices);
    rows[i].framework = frameworks[i];
    rows[i].plan = s.plan;
    rows[i].outcome = evaluate_plan(std::move(s));
  });
  // One search at a time: each already runs on every core.
  if (search)
    for (Framework f : frameworks) rows.push_back(searched_row(scenario, f, *search));
  for (FrameworkRow& row : rows) fill_breakdown(row);
  return rows;
}

std::string format_framework_comparison(const Scenario& scenario, const std::vector<FrameworkRow>& rows) {
  std::string out = scenario.name + " on " + std::to_string(scenario.num_devices) + " x " +
                    scenario.hardware.device.name + ", the scenario's plan: ";
  {
    ParallelPlan p = scenario.plan;
    derive_plan(p, scenario.num_devices);
    out += plan_text(p) + "\n";
  }
  out += "breakdown in seconds, each column the largest over the pipeline stages (compute = forward + backward + "
         "recompute; communication as exposed; bubble the largest stage idle, not run's mean over stages)\n";
  std::size_t w = 9;
  for (const auto& r : rows) w = std::max(w, row_label(r).size());
  char buf[512];
  std::snprintf(buf, sizeof buf, "%-*s %-8s %8s %6s %10s %8s %7s %7s %7s %7s %7s %7s %7s %8s\n", static_cast<int>(w),
                "framework", "plan", "step_s", "MFU%", "tokens/s", "compute", "TP_s", "CP+EP_s", "PP_s", "DP_s",
                "bubble", "optim", "host", "peak_GiB");
  out += buf;
  const FrameworkRow* fastest = nullptr;
  for (const auto& r : rows) {
    const PlanOutcome& o = r.outcome;
    std::snprintf(buf, sizeof buf, "%-*s %-8s ", static_cast<int>(w), row_label(r).c_str(), plan_source(r));
    out += buf;
    if (o.status != PlanStatus::ok) {
      // Not one the framework runs (or nothing fits): why, on the row; the others still compare.
      out += std::string(to_string(o.status)) + ": " + o.reason + "\n";
      continue;
    }
    if (!fastest || o.step_time_s < fastest->outcome.step_time_s) fastest = &r;
    std::snprintf(buf, sizeof buf, "%8.3f %6.1f %10.0f %8.3f %7.3f %7.3f %7.3f %7.3f %7.3f %7.3f %7.3f %8.1f",
                  o.step_time_s, 100 * o.mfu, o.tokens_per_s, r.compute_s, r.tp_exposed_s,
                  r.cp_exposed_s + r.ep_exposed_s, r.pp_exposed_s, r.dp_exposed_s, r.bubble_s, r.optimizer_s,
                  r.host_s, o.peak_memory_bytes / kBytesPerGiB);
    out += buf;
    if (r.searched) out += "  " + plan_text(r.plan);
    out += "\n";
  }
  if (fastest) {
    out += "fastest: " + row_label(*fastest) + " (" + plan_source(*fastest) + " plan, " +
           format_number("%.3f s", fastest->outcome.step_time_s) + ")";
    for (const auto& r : rows) {
      if (&r == fastest || r.outcome.status != PlanStatus::ok) continue;
      out += "; " + row_label(r) + (r.searched ? " (search) " : " ") +
             format_number("%+.1f%%", 100 * (r.outcome.step_time_s / fastest->outcome.step_time_s - 1));
    }
    out += "\n";
  }
  return out;
}

std::string framework_comparison_json(const Scenario& scenario, const std::vector<FrameworkRow>& rows) {
  nlohmann::ordered_json j;
  j["schema_version"] = kCompareSchemaVersion;
  j["trainsim_version"] = version();
  j["scenario"] = scenario.file;
  j["hardware"] = scenario.hardware.name;
  j["num_devices"] = scenario.num_devices;
  j["rows"] = nlohmann::ordered_json::array();
  for (const auto& row : rows) {
    const PlanOutcome& o = row.outcome;
    nlohmann::ordered_json r;
    r["framework"] = to_string(row.framework);
    r["plan_source"] = plan_source(row);
    r["status"] = to_string(o.status);
    r["reason"] = o.reason;
    add_plan_fields(r, row.plan);
    add_outcome_metrics(r, o);
    r["compute_s"] = row.compute_s;
    r["tp_exposed_s"] = row.tp_exposed_s;
    r["cp_exposed_s"] = row.cp_exposed_s;
    r["ep_exposed_s"] = row.ep_exposed_s;
    r["pp_exposed_s"] = row.pp_exposed_s;
    r["dp_exposed_s"] = row.dp_exposed_s;
    r["bubble_s"] = row.bubble_s;
    r["optimizer_s"] = row.optimizer_s;
    r["host_s"] = row.host_s;
    r["stage_peak_memory_gib"] = nlohmann::ordered_json::array();
    for (double b : o.stage_peak_memory_bytes) r["stage_peak_memory_gib"].push_back(b / kBytesPerGiB);
    j["rows"].push_back(std::move(r));
  }
  return j.dump(2) + "\n";
}

namespace {

// One CSV metric column: ",value", or "," for what is not known (a row that did not run: the
// JSON's null), never a 0 a reader would sum.
std::string csv_metric(double value, bool known) { return known ? format_number(",%.9g", value) : std::string(","); }

}  // namespace

std::string framework_comparison_csv(const std::vector<FrameworkRow>& rows) {
  std::string out =
      "framework,plan_source,status,step_time_s,tokens_per_s,mfu,bubble_fraction,compute_s,tp_exposed_s,cp_exposed_s,"
      "ep_exposed_s,pp_exposed_s,dp_exposed_s,bubble_s,optimizer_s,host_s,peak_memory_gib,plan,reason,"
      "critical_stage_bubble_fraction\n";  // the last column added last: the others keep their places
  for (const auto& r : rows) {
    const PlanOutcome& o = r.outcome;
    const bool ran = o.status == PlanStatus::ok;
    out += std::string(to_string(r.framework)) + "," + plan_source(r) + "," + to_string(o.status);
    for (double v : {o.step_time_s, o.tokens_per_s, o.mfu, o.bubble_fraction, r.compute_s, r.tp_exposed_s,
                     r.cp_exposed_s, r.ep_exposed_s, r.pp_exposed_s, r.dp_exposed_s, r.bubble_s, r.optimizer_s,
                     r.host_s})
      out += csv_metric(v, ran);
    out += csv_metric(o.peak_memory_bytes / kBytesPerGiB, o.peak_memory_bytes > 0);
    out += "," + csv_field(plan_text(r.plan)) + "," + csv_field(o.reason) +
           csv_metric(o.critical_stage_bubble_fraction, ran) + "\n";
  }
  return out;
}

std::string schedule_comparison_csv(const Scenario& scenario, const std::vector<ScheduleRow>& rows) {
  std::string out =
      "schedule,virtual_pipeline_model_parallel_size,status,step_time_s,tokens_per_s,tokens_per_s_per_device,mfu,"
      "bubble_fraction,critical_stage_bubble_fraction,peak_memory_gib,stage_peak_memory_gib,reason\n";
  for (const auto& row : rows) {
    const PlanOutcome& o = row.outcome;
    const bool ran = o.status == PlanStatus::ok;
    out += csv_field(row.choice.label) + "," +
           std::to_string(with_schedule(scenario, row.choice).plan.virtual_pipeline_model_parallel_size) + "," +
           to_string(o.status);
    for (double v : {o.step_time_s, o.tokens_per_s, o.tokens_per_s_per_device, o.mfu, o.bubble_fraction,
                     o.critical_stage_bubble_fraction})
      out += csv_metric(v, ran);
    out += csv_metric(o.peak_memory_bytes / kBytesPerGiB, o.peak_memory_bytes > 0);
    // Per stage, first to last, separated by spaces inside the one field.
    std::string stages;
    for (double b : o.stage_peak_memory_bytes)
      stages += (stages.empty() ? "" : " ") + format_number("%.9g", b / kBytesPerGiB);
    out += "," + stages + "," + csv_field(o.reason) + "\n";
  }
  return out;
}

}  // namespace trainsim
