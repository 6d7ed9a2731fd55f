// Reading a replay in tests: where a task's span ends, seconds as the engine's picoseconds.
#pragma once
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "trainsim/config/scenario.hpp"
#include "trainsim/cost/cost_model.hpp"
#include "trainsim/engine/engine.hpp"
#include "trainsim/graph/pipeline_costs.hpp"
#include "trainsim/memory/memory_model.hpp"
#include "trainsim/model/workload.hpp"
#include "trainsim/schedule/schedule.hpp"

namespace trainsim::testing {

// End of task `task`'s span (the first one recorded for it).
inline SimTime span_end(const ReplayResult& r, int task) {
  for (const auto& s : r.timeline.spans)
    if (s.task == task) return s.end;
  FAIL("no span for task " << task);
  return -1;
}

// The step's costs and stage orders from a scenario, as simulate() builds them.
struct BuiltStep {
  PipelineCosts costs;
  std::vector<StageOrder> orders;
};
inline BuiltStep build_step(const Scenario& s) {
  const Workload w = build_workload(s.model, s.plan);
  const CostModel cost(s.hardware, s.plan, s.num_devices);
  const MemoryReport memory = estimate_memory(s, w);
  BuiltStep b{build_pipeline_costs(s, w, cost, memory), {}};
  b.orders = build_schedule(s.plan.schedule, s.plan.pipeline_model_parallel_size, s.plan.num_microbatches(),
                            b.costs.num_chunks());
  return b;
}

inline SimTime ps(double s) { return static_cast<SimTime>(std::llround(s * 1e12)); }

// p stages of TP 2 x DP 2 (four ranks a stage, TP groups {0,1} and {2,3}): 1 ms forward and
// 2 ms backward a micro-batch (split evenly into B and W) over v chunks, 1 GB of activations,
// exposed TP collectives of 0.1 ms a pass, two 0.3 ms gradient buckets a chunk, 50 us exchanges,
// a 0.2 ms optimizer step.
// The same plan around the passes of `c` (its compute and activations; v chunks of them).
inline PipelineCosts tp2_dp2_costs(PipelineSchedule schedule, int p, int v, int m, ChunkCosts c) {
  c.tp_forward_s = 1e-4 / v;
  c.tp_backward_s = 1e-4 / v;
  c.buckets = {GradBucket{1e8, 3e-4}, GradBucket{1e8, 3e-4}};
  auto costs = uniform_pipeline_costs(schedule, p, v, m, c);
  costs.p2p_s = 5e-5;
  costs.tp = 2;
  costs.dp = 2;
  for (auto& s : costs.stages) s.optimizer_s = 2e-4;
  return costs;
}
inline PipelineCosts tp2_dp2_costs(PipelineSchedule schedule, int p, int v, int m) {
  ChunkCosts c;
  c.forward_s = 1e-3 / v;
  c.backward_input_s = 1e-3 / v;
  c.backward_weight_s = 1e-3 / v;
  c.activation_bytes = 1e9 / v;
  return tp2_dp2_costs(schedule, p, v, m, c);
}

}  // namespace trainsim::testing
