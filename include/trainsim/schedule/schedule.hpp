#pragma once
// Per-stage order of pipeline work, as Megatron-LM orders it.
//
// GPipe: all forwards, then all backwards (in micro-batch order).
// 1F1B (Megatron forward_backward_pipelining_without_interleaving): stage s runs
//   min(p-s-1, m) warmup forwards, then one forward / one backward pairs, then the
//   cooldown backwards.
// Interleaved 1F1B (forward_backward_pipelining_with_interleaving): m*v forward
//   "micro-batch chunks" per stage; the k-th forward runs chunk (k / p) % v on
//   micro-batch (k / (p*v))*p + k % p; backwards run chunks in reverse order;
//   warmup is (p-s-1)*2 + (v-1)*p (all of them when m == p); m must be a multiple of p.
// ZB-H1 (Qi et al. 2023, "Zero Bubble Pipeline Parallelism"): backward split into B
//   (input gradient, on the critical path) and W (weight gradient). Stage s keeps 1F1B's
//   warmup and defers up to s weight-gradient passes, which fill the cooldown bubble;
//   at most p micro-batches are alive on any stage, the same peak as 1F1B's stage 0.
#include <vector>

#include "trainsim/plan/parallel_plan.hpp"

namespace trainsim {

enum class WorkKind { forward, backward, backward_input, backward_weight };

struct WorkItem {
  WorkKind kind = WorkKind::forward;
  int microbatch = 0;
  int chunk = 0;  // model chunk (virtual stage) on this device, 0..v-1
  bool operator==(const WorkItem&) const = default;
};

using StageOrder = std::vector<WorkItem>;

// orders[stage] is the sequence of work that stage runs. `chunks` is v (1 unless interleaved).
// Throws ConfigError when the combination is impossible (interleaved with m % p != 0,
// chunks != 1 for a non-interleaved schedule, non-positive sizes).
std::vector<StageOrder> build_schedule(PipelineSchedule schedule, int stages, int microbatches, int chunks);

// "F3.1" style text of one item (kind, micro-batch, chunk) for tests and traces.
const char* to_string(WorkKind kind);

}  // namespace trainsim
