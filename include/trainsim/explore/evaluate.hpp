#pragma once
// One candidate plan judged the way every exploration command judges it: invalid (the
// plan checks), out of memory (the fast memory model), or simulated. Thread-safe: no
// shared state, so sweeps run many of these at once.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "trainsim/config/scenario.hpp"
#include "trainsim/metrics/step_metrics.hpp"

namespace trainsim {

enum class PlanStatus { ok, invalid, out_of_memory };
const char* to_string(PlanStatus status);  // "ok", "invalid", "out of memory"

struct PlanOutcome {
  PlanStatus status = PlanStatus::ok;
  std::string reason;  // invalid: the first line of the ConfigError; out of memory: the worst stage
  // Simulated metrics (0 unless status is ok).
  double step_time_s = 0;
  double tokens_per_s = 0;
  double tokens_per_s_per_device = 0;
  double mfu = 0;
  double bubble_fraction = 0;  // mean over stages of bubble / step time (StepMetrics)
  double critical_stage_bubble_fraction = 0;  // the critical stage's bubble / step time (StepMetrics)
  // From the memory model (also filled when out of memory).
  double peak_memory_bytes = 0;  // worst stage
  double hbm_bytes = 0;
  std::vector<double> stage_peak_memory_bytes;
  std::vector<StageBreakdown> stages;  // per-stage breakdown of the simulated step (ok only)
};

constexpr double kBytesPerGiB = 1024.0 * 1024.0 * 1024.0;

// The first line of an exception's message (a ConfigError lists one problem per line).
std::string first_line(const std::string& text);

// Checks the plan of an already loaded scenario whose plan was changed in memory
// (derive_plan + check_plan), then memory, then simulates without a timeline.
// Never throws ConfigError: an invalid plan is an outcome.
PlanOutcome evaluate_plan(Scenario scenario);

// The scenario's job (model, hardware, data loading) on `devices` devices under `plan`:
// what the explorers screen and replay for each candidate plan.
Scenario with_plan(const Scenario& scenario, int devices, const ParallelPlan& plan);

// An outcome's simulated metrics as JSON fields (units in the names), for sweep and search output.
void add_outcome_metrics(nlohmann::ordered_json& out, const PlanOutcome& outcome);

// A plan as JSON fields: its one-line description and the parallel sizes, schedule,
// sequence parallelism, optimizer sharding and recompute (search and choose output).
void add_plan_fields(nlohmann::ordered_json& out, const ParallelPlan& plan);

// Loads the scenario file with the overrides (ConfigError -> invalid), then as above.
PlanOutcome evaluate_plan(const std::string& scenario_path, const std::vector<Override>& overrides);

}  // namespace trainsim
