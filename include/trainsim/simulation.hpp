#pragma once
// One call from a scenario to its predicted step: Workload -> TaskGraph -> Engine ->
// Timeline -> Metrics. Used by every command (run, sweep, validate, ...).
#include <string>
#include <vector>

#include "trainsim/config/scenario.hpp"
#include "trainsim/cost/cost_model.hpp"
#include "trainsim/engine/timeline.hpp"
#include "trainsim/graph/pipeline_costs.hpp"
#include "trainsim/memory/memory_model.hpp"
#include "trainsim/metrics/step_metrics.hpp"
#include "trainsim/model/workload.hpp"

namespace trainsim {

enum class ReplayMode { representative, full };

struct SimOptions {
  ReplayMode mode = ReplayMode::representative;
  std::vector<double> device_speed;  // compute speed factor (1 = nominal) per rank (full mode) or per
                                     // stage (representative); empty: the scenario's variability
  std::vector<double> link_speed;    // full mode: per-rank link speed factor (1 = nominal)
  bool record_timeline = true;       // spans for traces; sweeps turn it off
};

struct SimResult {
  Workload workload;
  MemoryReport memory;
  Timeline timeline;
  StepMetrics metrics;
};

SimResult simulate(const Scenario& scenario, const SimOptions& options = {});

// A plan's memory and its pipeline's costs as the replay takes them: estimate_memory and the
// costs from it; for a schedule whose order the pass times place (ScheduleEntry::
// orders_read_pass_times: ZB-2p), the costs from the per-micro-batch figures first
// (estimate_memory_per_microbatch: the order does not change them) and the memory counted on
// the order their pass times give.
// Every command that reports a plan's memory beside or without a replay takes it from here.
struct PricedPlan {
  MemoryReport memory;
  PipelineCosts costs;
};
PricedPlan price_plan(const Scenario& scenario, const Workload& workload, const CostModel& cost);
// The memory of price_plan alone (the `memory` command, max-batch, fit advice); where the
// hardware file cannot price the step (a ConfigError: e.g. no CPU-Adam rate under optimizer
// offload), the order at equal pass times, the reference's before it has a profile.
MemoryReport replayed_memory(const Scenario& scenario, const Workload& workload);

// price_plan for a caller that replays only the plans that fit (evaluate_plan): the memory as
// replayed_memory counts it, and the costs only when it fits or the schedule's order needs them
// (empty costs otherwise). Throws the ConfigError of a plan that fits but cannot be priced.
PricedPlan price_plan_memory_first(const Scenario& scenario, const Workload& workload);

// The replay of a plan its caller has priced already (build_workload, then price_plan with the
// scenario's CostModel): evaluate_plan checks the memory first and replays only what fits,
// without pricing the plan twice.
SimResult simulate(const Scenario& scenario, Workload workload, PricedPlan priced, const SimOptions& options = {});

// Host time the background data loaders (DataLoading::loader_workers > 0) of one loading
// rank need for a step's micro-batches: micro-batches x micro batch x sample_load_time /
// workers; 0 without background loading. When it exceeds the step, simulate() makes the
// step wait for the difference at its start.
double background_load_s(const Scenario& scenario);

}  // namespace trainsim
