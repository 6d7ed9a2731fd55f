#include "trainsim/explore/choose.hpp"

#include <tbb/parallel_for.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>

#include "trainsim/common/error.hpp"
#include "trainsim/common/version.hpp"
#include "trainsim/framework/communicator.hpp"
#include "trainsim/framework/framework.hpp"
#include "trainsim/memory/memory_model.hpp"
#include "trainsim/model/workload.hpp"
#include "trainsim/plan/plan_check.hpp"
#include "trainsim/common/text.hpp"

namespace trainsim {

std::vector<HardwareSpec> load_hardware_list(const std::string& text) {
  const std::vector<std::string> files = split(text, ',');
  for (const auto& f : files)
    if (f.empty())
      throw ConfigError(
          Diagnostic{SourceLocation{}, "--hardware", "empty entry in '" + text + "'",
                     "hardware files, comma-separated, e.g. hardware/a100-80gb.yaml,hardware/h100-80gb.yaml"});
  // The same file twice would search it twice and name it winner and runner-up.
  for (std::size_t i = 0; i < files.size(); ++i)
    for (std::size_t j = 0; j < i; ++j) {
      std::error_code ec;
      if (files[i] == files[j] || std::filesystem::equivalent(files[i], files[j], ec))
        throw ConfigError(Diagnostic{SourceLocation{}, "--hardware",
                                     "'" + files[i] + "' is listed twice in '" + text + "'", "each hardware file once"});
    }
  // Every file is loaded before any search runs: a typo fails at once.
  std::vector<HardwareSpec> out;
  for (const auto& f : files) out.push_back(load_hardware(f));
  return out;
}

namespace {

// Smaller is better; +inf for rows that cannot win.
double objective_key(const HardwareChoiceRow& row, SearchObjective objective) {
  constexpr double kNever = std::numeric_limits<double>::infinity();
  if (!row.fits) return kNever;
  switch (objective) {
    case SearchObjective::throughput:
      return -row.best.outcome.tokens_per_s;
    case SearchObjective::time_to_train:
      return row.time_to_train_s;
    case SearchObjective::cost:
      return row.price_per_hour > 0 ? row.cost : kNever;
  }
  return kNever;
}

}  // namespace

std::vector<Diagnostic> check_choice_options(const HardwareChoiceOptions& options) {
  SearchOptions search;
  search.devices = options.devices;
  search.tokens = options.tokens;
  search.replay_limit = options.replay_limit;
  search.max_threads = options.max_threads;
  std::vector<Diagnostic> problems = check_search_options(search);
  if (!std::isfinite(options.pue) || !(options.pue >= 1.0) || options.pue > kMaxPue)
    problems.push_back(Diagnostic{SourceLocation{}, "--pue", format_number("%g", options.pue) + " is out of range",
                                  "a number from 1 (board power only) to 3 (facility power / IT power), e.g. 1.2"});
  return problems;
}

HardwareChoiceResult choose_hardware(const Scenario& scenario, const std::vector<HardwareSpec>& hardware,
                                     const HardwareChoiceOptions& options) {
  if (hardware.empty())
    throw ConfigError(Diagnostic{SourceLocation{}, "--hardware", "no hardware file", "e.g. hardware/a100-80gb.yaml"});
  if (auto problems = check_choice_options(options); !problems.empty()) throw ConfigError(problems);
  HardwareChoiceResult result;
  result.scenario_file = scenario.file;
  result.model_name = scenario.model.name;
  result.devices = options.devices > 0 ? options.devices : scenario.num_devices;
  if (options.devices < 0 || result.devices < 1)
    throw ConfigError(Diagnostic{SourceLocation{}, "--devices", "must be >= 1", "a device count"});
  result.seq_length = scenario.plan.seq_length;
  result.global_batch_size = scenario.plan.global_batch_size;
  result.framework = options.framework.value_or(scenario.plan.framework);
  result.tokens = options.tokens;
  result.pue = options.pue;
  result.objective = options.objective;

  SearchOptions search;
  search.devices = result.devices;
  search.top = 1;
  search.objective = options.objective;
  search.tokens = options.tokens;
  search.replay_limit = options.replay_limit;
  search.max_threads = options.max_threads;
  search.launcher = options.launcher;
  // One search at a time: each already runs its tiers on every core.
  for (const HardwareSpec& hw : hardware) {
    if (options.progress) {
      const std::size_t index = static_cast<std::size_t>(&hw - hardware.data());
      search.progress = [&options, index](std::size_t done, std::size_t total) { options.progress(index, done, total); };
    }
    Scenario s = scenario;
    s.hardware = hw;
    s.num_devices = result.devices;
    // An Ascend-only framework's job runs on what it patches elsewhere (check_plan refuses it there).
    const FrameworkEntry& asked = framework_entry(result.framework);
    s.plan.framework = asked.ascend_only.value && !is_ascend(hw) ? asked.cuda_base.value : result.framework;
    const SearchResult found = search_plans(s, search);
    HardwareChoiceRow row;
    row.hardware_name = hw.name;
    row.hardware_file = hw.file;
    row.device_name = hw.device.name;
    row.ascend = is_ascend(hw);
    row.framework = s.plan.framework;
    row.price_per_hour = hw.device.price_per_hour;
    row.power_w = hw.device.power_w;
    row.enumerated = found.enumerated;
    row.valid = found.valid;
    row.fit = found.fit;
    row.replayed = found.replayed;
    row.framework_skipped = found.framework_skipped;
    if (found.best.empty() || found.best.front().outcome.tokens_per_s <= 0) {
      row.reason = no_plan_reason(s, found);
    } else {
      row.fits = true;
      row.best = found.best.front();
      Scenario planned = with_plan(s, result.devices, row.best.plan);
      // The failure rate follows each hardware file unless the scenario sets its own.
      if (!scenario.goodput.failure_rate_given)
        planned.goodput.failure_rate_per_device_hour = hw.failure_rate_per_device_hour;
      row.goodput = goodput_report(planned, result.devices, row.best.outcome.step_time_s);
      // No goodput (failures come faster than a restart): the job never finishes, and its
      // time, device-hours, cost and energy are infinite, said in words (never, null); a floor
      // on the goodput printed 9 million days.
      const double useful_tokens_per_s = row.best.outcome.tokens_per_s * row.goodput.goodput;
      row.time_to_train_s =
          useful_tokens_per_s > 0 ? options.tokens / useful_tokens_per_s : std::numeric_limits<double>::infinity();
      const double hours = row.time_to_train_s / 3600.0;
      row.device_hours = result.devices * hours;
      row.cost = row.device_hours * row.price_per_hour;
      row.energy_mwh = row.device_hours * row.power_w * options.pue / 1e6;
    }
    result.rows.push_back(std::move(row));
  }
  double best_key = std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < result.rows.size(); ++i) {
    const double key = objective_key(result.rows[i], result.objective);
    if (key < best_key) {
      best_key = key;
      result.winner = static_cast<int>(i);
    }
  }
  return result;
}

namespace {

// The objective's value of a row, as printed in the verdict.
std::string objective_value(const HardwareChoiceRow& row, SearchObjective objective) {
  switch (objective) {
    case SearchObjective::throughput:
      return format_number("%.0f tokens/s", row.best.outcome.tokens_per_s);
    case SearchObjective::time_to_train:
      return std::isfinite(row.time_to_train_s) ? days_text(row.time_to_train_s) + " days" : "never";
    case SearchObjective::cost:
      return std::isfinite(row.cost) ? format_number("cost %.0f", row.cost) : "never finishes";
  }
  return "";
}

}  // namespace

std::string format_hardware_choice(const HardwareChoiceResult& r) {
  char buf[640];
  std::snprintf(buf, sizeof buf,
                "%s on %d devices, seq %d, global batch %d: best plan per hardware (plan search), %.3g tokens to "
                "train, objective %s\n"
                "days = tokens / (tokens/s x goodput); goodput prices failures at the hardware's rate, restarts and "
                "checkpoints at Young's interval\n"
                "cost = device-hours x price_per_hour; energy = devices x board power x hours x PUE %.2f (board power "
                "only: no host CPUs, network or storage)\n",
                r.model_name.c_str(), r.devices, r.seq_length, r.global_batch_size, r.tokens, to_string(r.objective),
                r.pue);
  std::string out = buf;
  out += framework_rule(r.framework, 0) + "\n";  // the skipped count differs by hardware: in --json
  std::string others;
  for (const auto& row : r.rows)
    if (row.framework != r.framework) others += (others.empty() ? "" : ", ") + row.hardware_name;
  if (!others.empty())
    out += "note: " + std::string(to_string(r.framework)) + " runs on Ascend NPUs only; on " + others + " the plans are " +
           to_string(framework_entry(r.framework).cuda_base.value) + "'s, the framework it patches\n";
  int w = 8;
  for (const auto& row : r.rows) w = std::max(w, static_cast<int>(row.hardware_name.size()));
  std::snprintf(buf, sizeof buf, "%-*s %7s %6s %8s %10s %6s %8s %7s %12s %12s %8s  %s\n", w, "hardware", "price/h",
                "W/dev", "step_s", "tokens/s", "MFU%", "goodput%", "days", "device-hours", "cost", "MWh", "best plan");
  out += buf;
  for (const auto& row : r.rows) {
    const std::string price = row.price_per_hour > 0 ? format_number("%.2f", row.price_per_hour) : "unknown";
    const std::string power = row.power_w > 0 ? format_number("%.0f", row.power_w) : "unknown";
    std::snprintf(buf, sizeof buf, "%-*s %7s %6s ", w, row.hardware_name.c_str(), price.c_str(), power.c_str());
    out += buf;
    if (!row.fits) {
      out += row.reason + "\n";
      continue;
    }
    const PlanOutcome& o = row.best.outcome;
    const bool finishes = std::isfinite(row.time_to_train_s);
    const std::string cost = !finishes ? "never" : row.price_per_hour > 0 ? format_number("%.0f", row.cost) : "unknown";
    const std::string energy = !finishes ? "never" : row.power_w > 0 ? format_number("%.1f", row.energy_mwh) : "unknown";
    const std::string days = finishes ? days_text(row.time_to_train_s) : "never";
    const std::string hours = finishes ? format_number("%.0f", row.device_hours) : "never";
    std::snprintf(buf, sizeof buf, "%8.3f %10.0f %6.1f %8.1f %7s %12s %12s %8s  ", o.step_time_s, o.tokens_per_s,
                  100 * o.mfu, 100 * row.goodput.goodput, days.c_str(), hours.c_str(), cost.c_str(), energy.c_str());
    out += buf + search_plan_text(row.best.plan) + "\n";
  }
  if (r.winner < 0) {
    bool any_fit = false;
    for (const auto& row : r.rows) any_fit |= row.fits;
    out += any_fit ? "no winner on cost: no hardware that fits has a price (price_per_hour 0 = unknown)\n"
                   : "no winner: no plan fits on any of the hardware\n";
    return out;
  }
  const HardwareChoiceRow& win = r.rows[static_cast<std::size_t>(r.winner)];
  out += "best on " + std::string(to_string(r.objective)) + ": " + win.hardware_name + " (" +
         objective_value(win, r.objective) + ")";
  // The runner-up: the best other row by the same key.
  const HardwareChoiceRow* next = nullptr;
  for (std::size_t i = 0; i < r.rows.size(); ++i) {
    if (static_cast<int>(i) == r.winner) continue;
    const double key = objective_key(r.rows[i], r.objective);
    if (key == std::numeric_limits<double>::infinity()) continue;
    if (!next || key < objective_key(*next, r.objective)) next = &r.rows[i];
  }
  if (next) out += "; next " + next->hardware_name + " (" + objective_value(*next, r.objective) + ")";
  out += "\n";
  if (r.objective == SearchObjective::cost)
    for (const auto& row : r.rows)
      if (row.fits && row.price_per_hour <= 0)
        out +=
            row.hardware_name + ": price unknown (price_per_hour 0 in " + row.hardware_file + "), not ranked on cost\n";
  return out;
}

std::string hardware_choice_json(const HardwareChoiceResult& r) {
  nlohmann::ordered_json j;
  j["schema_version"] = kHardwareChoiceSchemaVersion;
  j["trainsim_version"] = version();
  j["scenario"] = r.scenario_file;
  j["model"] = r.model_name;
  j["devices"] = r.devices;
  j["seq_length"] = r.seq_length;
  j["global_batch_size"] = r.global_batch_size;
  j["framework"] = to_string(r.framework);
  j["tokens"] = r.tokens;
  j["objective"] = to_string(r.objective);
  j["pue"] = r.pue;
  j["energy_scope"] = "board power only (devices x power x hours x PUE); no host CPUs, network or storage";
  j["winner"] = r.winner >= 0 ? nlohmann::ordered_json(r.rows[static_cast<std::size_t>(r.winner)].hardware_name)
                              : nlohmann::ordered_json(nullptr);
  j["winner_index"] = r.winner;
  j["rows"] = nlohmann::ordered_json::array();
  for (const auto& row : r.rows) {
    nlohmann::ordered_json e;
    e["hardware"] = row.hardware_name;
    e["hardware_file"] = row.hardware_file;
    e["device"] = row.device_name;
    e["price_per_hour"] = row.price_per_hour;
    e["power_w"] = row.power_w;
    e["status"] = row.fits ? "ok" : "no plan fits";
    e["reason"] = row.reason;
    e["enumerated"] = row.enumerated;
    e["valid"] = row.valid;
    e["fit"] = row.fit;
    e["replayed"] = row.replayed;
    e["framework_skipped"] = row.framework_skipped;
    e["ascend"] = row.ascend;
    e["framework"] = to_string(row.framework);
    if (row.fits) {
      add_plan_fields(e, row.best.plan);
    } else {
      e["plan"] = nullptr;
    }
    add_outcome_metrics(e, row.best.outcome);
    e["goodput"] = row.fits ? nlohmann::ordered_json(row.goodput.goodput) : nlohmann::ordered_json(nullptr);
    e["mtbf_s"] = row.goodput.mtbf_s;
    e["checkpoint_interval_s"] = row.goodput.interval_s;
    e["checkpoint_cost_s"] = row.goodput.checkpoint_cost_s;
    // null where the job never finishes (no goodput): "finishes" false.
    const auto finite = [](double x) { return std::isfinite(x) ? nlohmann::ordered_json(x) : nlohmann::ordered_json(nullptr); };
    e["finishes"] = row.fits && std::isfinite(row.time_to_train_s);
    e["time_to_train_s"] = finite(row.time_to_train_s);
    e["time_to_train_days"] = finite(row.time_to_train_s / 86400);
    e["device_hours"] = finite(row.device_hours);
    e["cost"] = finite(row.cost);
    e["cost_known"] = row.price_per_hour > 0;
    e["energy_mwh"] = finite(row.energy_mwh);
    e["energy_known"] = row.power_w > 0;
    j["rows"].push_back(std::move(e));
  }
  return j.dump(2) + "\n";
}

}  // namespace trainsim
