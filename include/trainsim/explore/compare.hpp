#pragma once
// `trainsim compare --schedules gpipe,1f1b,interleaved:2,zb-h1`: one scenario under
// several pipeline schedules, side by side. Everything but the schedule (and, for
// interleaved:v, the virtual pipeline size) stays as the scenario says.
#include <string>
#include <vector>

#include "trainsim/config/scenario.hpp"
#include "trainsim/explore/evaluate.hpp"
#include "trainsim/explore/search.hpp"
#include "trainsim/validation/confidence.hpp"

namespace trainsim {

struct ScheduleChoice {
  std::string label;  // as written: "interleaved:2"
  PipelineSchedule schedule = PipelineSchedule::one_f_one_b;
  int virtual_stages = 1;  // virtual_pipeline_model_parallel_size; interleaved without :v keeps the scenario's
  // "vocab-1", "vocab-2", "interlaced": 1F1B with plan.vocab_parallel so; every other choice runs without.
  VocabParallel vocab_parallel = VocabParallel::none;
};

// What --schedules takes, from the schedule table: "gpipe, 1f1b, interleaved[:V] (V >= 2), ...,
// comma-separated" (its help and its errors' valid list).
std::string schedule_list_choices();

// "gpipe,1f1b,interleaved:2,interleaved:4,zb-h1". Throws ConfigError (key "--schedules")
// for an unknown schedule, a bad or missing v, v given to a non-interleaved schedule, or a
// choice listed twice.
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
// One line per row: schedule,virtual_pipeline_model_parallel_size,status,step_time_s,...,
// peak_memory_gib,stage_peak_memory_gib (the stages' GiB, space-separated),reason; a row that did
// not run has its metrics empty (the JSON's nulls) and its reason.
std::string schedule_comparison_csv(const Scenario& scenario, const std::vector<ScheduleRow>& rows);

// `trainsim compare --frameworks megatron-core,deepspeed,fsdp`: the scenario's plan under
// each framework (plan.framework: its buckets, dtypes, sends and gathers), side by side; with
// `--search`, also each framework's best plan from the plan search. A plan a framework does
// not run is a row with the reason (the plan checks'), not an error.

// "megatron-core,deepspeed,fsdp". Throws ConfigError (key "--frameworks") for an empty entry
// or an unknown name (listing the valid ones).
std::vector<Framework> parse_framework_list(const std::string& text);

struct FrameworkRow {
  Framework framework = Framework::megatron_core;
  bool searched = false;  // the plan is the search's best for this framework, not the scenario's
  ParallelPlan plan;      // the plan judged (DP derived)
  PlanOutcome outcome;    // invalid: the reason the framework does not run the plan
  // The step's breakdown, seconds, each the largest over the pipeline stages (0 unless ok):
  // compute = forward + backward + recompute; the rest exposed (not hidden under compute).
  double compute_s = 0, tp_exposed_s = 0, cp_exposed_s = 0, ep_exposed_s = 0, pp_exposed_s = 0,
         dp_exposed_s = 0, bubble_s = 0, optimizer_s = 0, host_s = 0;
};

// The scenario's plan under each framework, in the order given (simulated in parallel);
// with `search`, then each framework's best plan (search_plans with its framework set,
// top 1; a framework with no plan that fits gets a row with the reason).
std::vector<FrameworkRow> compare_frameworks(const Scenario& scenario, const std::vector<Framework>& frameworks,
                                             const SearchOptions* search = nullptr);

std::string format_framework_comparison(const Scenario& scenario, const std::vector<FrameworkRow>& rows);
// {"schema_version", "scenario", "hardware", "num_devices", "rows": [{"framework", "plan_source"
//  ("scenario" or "search"), "status", "reason", plan fields, metrics, breakdown, "stage_peak_memory_gib"}]}
std::string framework_comparison_json(const Scenario& scenario, const std::vector<FrameworkRow>& rows);
// One line per row: framework,plan_source,status,step_time_s,...,plan,reason (quoted when
// they hold a comma); a row that did not run has its metrics empty (the JSON's nulls).
std::string framework_comparison_csv(const std::vector<FrameworkRow>& rows);

}  // namespace trainsim
