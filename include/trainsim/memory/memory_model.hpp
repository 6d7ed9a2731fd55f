#pragma once
// Device memory per pipeline stage: weights, gradients, optimizer state (by ZeRO
// stage / distributed optimizer), activations of the micro-batches in flight,
// communication buffers and the allocator reserve. Bytes throughout.
#include <vector>

#include "trainsim/config/scenario.hpp"
#include "trainsim/model/workload.hpp"

namespace trainsim {

// Korthikanti et al. 2022 activation bytes of one transformer layer for one
// micro-batch on one device (16-bit activations), given TP, SP, CP and recompute.
double activation_bytes_per_layer(const ModelSpec& model, const ParallelPlan& plan);

// Micro-batches whose activations are alive at once on `stage` under the plan's schedule.
int microbatches_in_flight(const ParallelPlan& plan, int stage);

struct StageMemory {
  int stage = 0;
  int layers = 0;
  double parameters = 0;           // held by one device of this stage (before ZeRO-3 sharding)
  double weights = 0;
  double gradients = 0;
  double optimizer_states = 0;
  double activations = 0;          // all micro-batches in flight
  double activations_per_microbatch = 0;
  int microbatches_in_flight = 0;
  double communication_buffers = 0;
  double reserve = 0;              // allocator / runtime workspace (hardware file)
  double offloaded_to_host = 0;    // optimizer state moved to host memory (not on device)

  double peak() const {
    return weights + gradients + optimizer_states + activations + communication_buffers + reserve;
  }
};

struct MemoryReport {
  std::vector<StageMemory> stages;
  double hbm_bytes = 0;
  int worst_stage = 0;
  double peak_bytes = 0;  // max over stages
  bool fits = true;
};

MemoryReport estimate_memory(const Scenario& scenario, const Workload& workload);

}  // namespace trainsim
