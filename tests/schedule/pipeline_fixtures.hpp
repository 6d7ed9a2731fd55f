#pragma once
// Shared by the schedule tests: one chunk's pass times and a replay of a schedule's graph.
#include "trainsim/engine/engine.hpp"
#include "trainsim/graph/task_graph.hpp"
#include "trainsim/schedule/schedule.hpp"

namespace trainsim::testing {

// One chunk's passes: forward t_f, B t_b, W t_w seconds, one activation unit of kAct bytes.
constexpr double kAct = 1e9;
inline ChunkCosts passes(double t_f, double t_b, double t_w) {
  ChunkCosts c;
  c.forward_s = t_f;
  c.backward_input_s = t_b;
  c.backward_weight_s = t_w;
  c.activation_bytes = kAct;
  return c;
}

// The plan's schedule built for its costs, turned into a graph and replayed.
inline ReplayResult run(const PipelineCosts& costs, const ReplayOptions& options = {},
                        const MicrobatchGroups& groups = {}) {
  const auto orders =
      build_schedule(costs.schedule, costs.num_stages(), costs.microbatches, costs.num_chunks(), groups);
  return replay(build_task_graph(costs, orders), options);
}

}  // namespace trainsim::testing
