#pragma once
// Per-stage order of pipeline work, as Megatron-LM orders it.
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
std::vector<StageOrder> build_schedule(PipelineSchedule schedule, int stages, int microbatches, int chunks);

}  // namespace trainsim
