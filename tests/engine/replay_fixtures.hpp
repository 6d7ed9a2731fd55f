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

}  // namespace trainsim::testing
