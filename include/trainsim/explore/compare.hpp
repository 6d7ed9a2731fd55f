#pragma once
// `trainsim compare --schedules gpipe,1f1b,interleaved:2,zb-h1`: one scenario under
// several pipeline schedules, side by side. Everything but the schedule (and, for
// interleaved:v, the virtual pipeline size) stays as the scenario says.
#include <string>
#include <vector>

#include "trainsim/config/scenario.hpp"
#include "trainsim/explore/evaluate.hpp"
#include "trainsim/validation/confidence.hpp"

namespace trainsim {

struct ScheduleChoice {
  std::string label;  // as written: "interleaved:2"
  PipelineSchedule schedule = PipelineSchedule::one_f_one_b;
  int virtual_stages = 1;  // virtual_pipeline_model_parallel_size; interleaved without :v keeps the scenario's
};

// "gpipe,1f1b,interleaved:2,interleaved:4,zb-h1". Throws ConfigError (key "--schedules")
// for an unknown schedule, a bad or missing v, or v given to a non-interleaved schedule.
std::vector<ScheduleChoice> parse_schedule_list(const std::string& text);

// The scenario under one schedule choice (not yet re-checked: evaluate_plan checks it).
Scenario with_schedule(const Scenario& scenario, const ScheduleChoice& choice);

struct ScheduleRow {
  ScheduleChoice choice;
  PlanOutcome outcome;  // invalid combinations carry the reason
};

// The rows in the order of `choices` (simulated in parallel).
std::vector<ScheduleRow> compare_schedules(const Scenario& scenario, const std::vector<ScheduleChoice>& choices);

// `confidence`: when given, each simulated row against the fastest: "A beats B with
// probability p" (confidence.hpp, the scenario's family).
std::string format_schedule_comparison(const Scenario& scenario, const std::vector<ScheduleRow>& rows,
                                       const ConfidenceData* confidence = nullptr);

constexpr int kCompareSchemaVersion = 1;
// {"schema_version", "scenario", "hardware", "num_devices", "rows": [{"schedule", "status",
//  "reason", "step_time_s", ..., "stage_peak_memory_gib": [...]}]}; invalid and
// out-of-memory rows keep their reason.
std::string schedule_comparison_json(const Scenario& scenario, const std::vector<ScheduleRow>& rows);

}  // namespace trainsim
