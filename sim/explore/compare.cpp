#include "trainsim/explore/compare.hpp"

#include <tbb/parallel_for.h>

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "trainsim/common/error.hpp"
#include "trainsim/common/text.hpp"

namespace trainsim {

namespace {

ConfigError schedules_error(const std::string& problem) {
  return ConfigError(Diagnostic{SourceLocation{}, "--schedules", problem,
                                "gpipe, 1f1b, interleaved:V (V >= 2), zb-h1, comma-separated"});
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
    if (name == "gpipe") {
      c.schedule = PipelineSchedule::gpipe;
    } else if (name == "1f1b") {
      c.schedule = PipelineSchedule::one_f_one_b;
    } else if (name == "interleaved") {
      c.schedule = PipelineSchedule::interleaved;
      c.virtual_stages = 0;  // the scenario's own
    } else if (name == "zb-h1") {
      c.schedule = PipelineSchedule::zero_bubble_h1;
    } else {
      throw schedules_error("unknown schedule '" + name + "'");
    }
    if (colon != std::string::npos) {
      if (c.schedule != PipelineSchedule::interleaved)
        throw schedules_error("'" + item + "': only interleaved takes a number of virtual stages");
      const std::string v = item.substr(colon + 1);
      int value = 0;
      for (char ch : v) {
        if (ch < '0' || ch > '9' || value > 100000) {
          value = -1;
          break;
        }
        value = value * 10 + (ch - '0');
      }
      if (v.empty() || value < 2) throw schedules_error("'" + item + "': V must be an integer >= 2");
      c.virtual_stages = value;
    }
    out.push_back(c);
  }
  return out;
}

Scenario with_schedule(const Scenario& scenario, const ScheduleChoice& choice) {
  Scenario s = scenario;
  s.plan.schedule = choice.schedule;
  if (choice.schedule != PipelineSchedule::interleaved) {
    s.plan.virtual_pipeline_model_parallel_size = 1;
  } else if (choice.virtual_stages > 0) {
    s.plan.virtual_pipeline_model_parallel_size = choice.virtual_stages;
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
  std::snprintf(buf, sizeof buf, "%-*s  %8s  %8s  %6s  %10s  %s\n", static_cast<int>(w), "schedule", "step_s",
                "bubble%", "MFU%", "tokens/s", "peak GiB per stage");
  out += buf;
  for (const auto& r : rows) {
    const PlanOutcome& o = r.outcome;
    std::string peaks;
    for (double b : o.stage_peak_memory_bytes) {
      std::snprintf(buf, sizeof buf, "%s%.1f", peaks.empty() ? "" : " ", b / kBytesPerGiB);
      peaks += buf;
    }
    if (o.status == PlanStatus::ok) {
      std::snprintf(buf, sizeof buf, "%-*s  %8.3f  %8.1f  %6.1f  %10.0f  ", static_cast<int>(w),
                    r.choice.label.c_str(), o.step_time_s, 100 * o.bubble_fraction, 100 * o.mfu, o.tokens_per_s);
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

}  // namespace trainsim
