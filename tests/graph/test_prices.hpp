#pragma once
// Price functions for the graph and pipeline-cost tests: times proportional to the work, so each
// test's expected step follows from its closed form by hand.
#include "trainsim/graph/pipeline_costs.hpp"

namespace trainsim::testing {

// 1 TFLOP/s for compute, 1 GB/s for collectives, 10 GB/s point to point, 1 TB/s for memory-bound
// traffic; no latency.
inline CostFunctions linear_prices() {
  CostFunctions f;
  f.forward_s = [](const Op& op) { return op.forward_flops * 1e-12; };
  f.backward_s = [](const Op& op) { return op.backward_flops * 1e-12; };
  f.backward_weight_s = [](const Op& op) { return op.backward_weight_flops * 1e-12; };
  f.collective_s = [](const CommOp& c) { return c.bytes * 1e-9; };
  f.group_collective = [](CollectiveKind, CommGroup, double bytes) { return GroupCollective{bytes * 1e-9, bytes}; };
  f.p2p_s = [](double bytes) { return bytes * 1e-10; };
  f.memory_bound_s = [](double bytes) { return bytes * 1e-12; };
  return f;
}

// linear_prices with every grouped collective a fixed 100 s and every ring (bucketed) collective a
// fixed 1 s, and the layers' own collectives free: a step's time then counts the collectives issued.
inline CostFunctions counting_prices() {
  CostFunctions f = linear_prices();
  f.collective_s = [](const CommOp&) { return 0.0; };
  f.group_collective = [](CollectiveKind, CommGroup, double bytes) { return GroupCollective{100.0, bytes}; };
  f.ring_collective = [](CollectiveKind, CommGroup, double bytes) { return GroupCollective{1.0, bytes}; };
  return f;
}

// linear_prices with all communication free: the step is compute and memory traffic, and the
// collectives' bytes are still reported.
inline CostFunctions compute_only_prices() {
  CostFunctions f = linear_prices();
  f.collective_s = [](const CommOp&) { return 0.0; };
  f.group_collective = [](CollectiveKind, CommGroup, double bytes) { return GroupCollective{0.0, bytes}; };
  f.p2p_s = [](double) { return 0.0; };
  return f;
}

}  // namespace trainsim::testing
