#pragma once
// Device memory per pipeline stage: weights, gradients, optimizer state (by ZeRO
// stage / distributed optimizer), activations of the micro-batches in flight,
// communication buffers and the allocator reserve. Bytes throughout.
#include <string>
#include <vector>

#include "trainsim/config/scenario.hpp"
#include "trainsim/model/workload.hpp"

namespace trainsim {

// Korthikanti et al. 2022 activation bytes of one transformer layer for one
// micro-batch on one device (16-bit activations), given TP, SP, CP and recompute.
double activation_bytes_per_layer(const ModelSpec& model, const ParallelPlan& plan);

// Chunk activations alive at once on `stage` at its peak, counted on the plan's schedule
// order (rounded up: B frees 1 - kWeightGradActivationShare of one, W the rest). The orders
// give GPipe: all m; 1F1B: min(m, p - stage); interleaved (in model chunks, as Megatron
// counts them): min((p - stage - 1) * 2 + (v - 1) * p + 1, m * v); ZB-H1: p - stage/2 (the
// W passes it holds back keep half a unit each); ZB-H2: 2p - 1 on the first stage.
int microbatches_in_flight(const ParallelPlan& plan, int stage);

// Layers held by each pipeline stage: plan.layers_per_stage when given, else an even
// split (any remainder goes to the first stages).
std::vector<int> layers_per_stage(const ParallelPlan& plan, int num_layers);

struct StageMemory {
  int stage = 0;
  int layers = 0;
  double parameters = 0;  // held by one device of this stage (before ZeRO-3 sharding)
  double weights = 0;
  double gradients = 0;
  double optimizer_states = 0;
  double activations = 0;  // all micro-batches in flight
  double activations_per_microbatch = 0;
  int microbatches_in_flight = 0;
  double communication_buffers = 0;
  double reserve = 0;            // allocator / runtime workspace (hardware file)
  double offloaded_to_host = 0;  // optimizer state moved to host memory (not on device)
  // Added: short-lived tensors on top of the stored activations at the stage's worst
  // moment, the largest of: the recompute working set of one layer / group; the backward
  // working set (gradient of the largest saved op input + the inter-layer gradient);
  // the bf16 logits next to the fp32 softmax at the loss on the last stage.
  double transient = 0;
  double activations_embedding_head = 0;  // part of `activations`: embedding / LM head / loss
  // The collective library's buffers for the communicators this rank is in (NCCL / HCCL,
  // trainsim/framework/communicator.hpp): allocated by the library, outside the framework's
  // caching allocator, so in peak() but not in allocated().
  double communicator_buffers = 0;

  // What torch.cuda.max_memory_allocated() would report (no allocator reserve).
  double allocated() const {
    return weights + gradients + optimizer_states + activations + transient + communication_buffers;
  }
  double peak() const { return allocated() + reserve + communicator_buffers; }
};

struct MemoryReport {
  std::vector<StageMemory> stages;
  double hbm_bytes = 0;
  int worst_stage = 0;
  double peak_bytes = 0;  // max over stages
  bool fits = true;
  double peak_allocated_bytes = 0;  // max over stages of allocated() (no reserve)
};

MemoryReport estimate_memory(const Scenario& scenario, const Workload& workload);

// "stage 1 needs 80.9 GiB of 80.0 GiB": where a plan overflows, for error messages.
std::string describe_overflow(const MemoryReport& report);

}  // namespace trainsim
