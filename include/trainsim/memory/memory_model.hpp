#pragma once
// Device memory per pipeline stage: weights, gradients, optimizer state (by ZeRO
// stage / distributed optimizer), activations of the micro-batches in flight,
// communication buffers and the allocator reserve. Bytes throughout.
#include <cstdint>
#include <string>
#include <vector>

#include "trainsim/config/scenario.hpp"
#include "trainsim/hardware/hardware_spec.hpp"
#include "trainsim/model/workload.hpp"
#include "trainsim/schedule/schedule.hpp"

namespace trainsim {

// Korthikanti et al. 2022 activation bytes of one transformer layer for one
// micro-batch on one device (16-bit activations), given TP, SP, CP and recompute.
double activation_bytes_per_layer(const ModelSpec& model, const ParallelPlan& plan);

// Chunk activations alive at once on `stage` at its peak, counted on the plan's schedule
// order with W keeping the flat kWeightGradActivationShare of a unit (rounded up; the memory
// report counts each stage's own share, StageMemory::weight_grad_share) and ZB-2p's order
// built at equal pass times (the report counts the replay's, built from the priced passes). The orders
// give GPipe: all m; 1F1B: min(m, p - stage); interleaved (in model chunks, as Megatron
// counts them): min((p - stage - 1) * 2 + (v - 1) * p + 1, m * v); ZB-H1: p - stage/2 (the
// W passes it holds back keep half a unit each); ZB-H2: 2p - 1 on the first stage.
int microbatches_in_flight(const ParallelPlan& plan, int stage);

// Layers held by each pipeline stage: plan.layers_per_stage when given, else an even
// split (any remainder goes to the first stages).
std::vector<int> layers_per_stage(const ParallelPlan& plan, int num_layers);

// FP8 weights (issue 15). Bytes Transformer Engine keeps of one FP8 GEMM weight of `rows` x `cols`
// (out x in features), quantized for the forward GEMM and for the backward's (the columnwise
// usage a weight that needs gradients asks for: module/linear.py _linear_forward_impl), with its
// scales, as the quantizers allocate them (NVIDIA/TransformerEngine @ d0067d0da6
// transformer_engine/pytorch/tensor/*.py inner_tensor_specs / get_scale_shape, csrc/quantizer.cpp):
//  - delayed, tensorwise (Float8Quantizer, Float8CurrentScalingQuantizer): the row-wise data
//    (rows x cols, 1 byte) and, where FP8 GEMMs take only the TN layout (Hopper), its transpose
//    (_transpose, cols x rows); with non-TN FP8 GEMMs (compute capability 10.x, 11.x, >= 13:
//    utils.py is_non_tn_fp8_gemm_supported) the one _data buffer serves both; one fp32
//    _scale_inv per tensor;
//  - blockwise (Float8BlockQuantizer, 128 x 128 weight blocks): row-wise and column-wise data,
//    and fp32 scales ceil(rows/128) x round_up(ceil(cols/128), 4) and
//    ceil(cols/128) x round_up(ceil(rows/128), 4);
//  - mxfp8 (MXFP8Quantizer, 32-element blocks): row-wise and column-wise data, and E8M0 scales
//    (1 byte) round_up(rows, 128) x round_up(cols / 32, 4) and round_up(rows / 32, 4) x
//    round_up(cols, 128).
double te_fp8_weight_bytes(Fp8Recipe recipe, std::int64_t rows, std::int64_t cols, bool non_tn_fp8_gemm);
// The device runs FP8 GEMMs in the non-TN layouts (TE keeps no transpose of a per-tensor FP8
// weight). trainsim's hardware files have no compute-capability key: taken from device.mxfp8,
// which the same generation brought (B200, compute capability 10.0; H100 9.0 has neither).
bool non_tn_fp8_gemm(const DeviceSpec& device);
// A layer's FP8 GEMM weights (cost_model.hpp runs_fp8) in TE's bytes: te_fp8_weight_bytes of each
// weight, gemm_n x gemm_k after TP, once per local expert of a grouped GEMM (TE GroupedLinear
// holds each expert's weight as its own parameter, weight0 .. weightN-1, each with its own copy).
double te_fp8_layer_weight_bytes(const LayerWorkload& layer, Fp8Recipe recipe, bool non_tn);

struct StageMemory {
  int stage = 0;
  int layers = 0;
  double parameters = 0;  // held by one device of this stage (before ZeRO-3 sharding)
  double weights = 0;
  // Part of `weights` (issue 15): the FP8 GEMM weights in FP8 as Transformer Engine holds them
  // (te_fp8_weight_bytes): the copies a framework that caches them keeps for the step beside the
  // 16-bit weights (FrameworkEntry::fp8_weights_cached_per_step), or the FP8 parameters that
  // replace the 16-bit ones under plan.fp8_param_gather.
  double fp8_weights = 0;
  double gradients = 0;
  double optimizer_states = 0;
  double activations = 0;  // all micro-batches in flight
  double activations_per_microbatch = 0;
  int microbatches_in_flight = 0;
  // Share of a micro-batch's activations a W pass keeps after its B (weight_grad_kept_bytes over
  // the stage's layers' kept activations; above 1 under recompute, whose B leaves W more than F
  // kept; kWeightGradActivationShare where the schedule has no W pass).
  double weight_grad_share = kWeightGradActivationShare;
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
  // The schedule's grouping the activations in flight were counted on (with the largest stage's
  // W share for ZB-2p's limit): microbatch_groups(plan, report) hands the replay the same orders.
  MicrobatchGroups groups;
};

// `pass_times`: the priced passes ZB-2p's heuristic builds its order by (zb_pass_times of the
// plan's PipelineCosts; the replay re-counts with them, simulation.hpp replayed_memory); empty:
// its equal-time order. Read by no other schedule.
MemoryReport estimate_memory(const Scenario& scenario, const Workload& workload,
                             const MicrobatchGroups::PassTimes& pass_times = {});
// The figures per micro-batch alone, what build_pipeline_costs reads (each stage's activations
// per micro-batch and W share, StageMemory::activations_per_microbatch and weight_grad_share):
// the activations in flight by the schedule's closed form, not counted on its order, so its
// peaks are not the report's. price_plan prices ZB-2p's passes from it before building the order.
MemoryReport estimate_memory_per_microbatch(const Scenario& scenario, const Workload& workload);

// The grouping `memory` was counted on (MemoryReport::groups; the plan's own for a report
// without stages): the orders the replay runs are the ones the memory was counted on.
MicrobatchGroups microbatch_groups(const ParallelPlan& plan, const MemoryReport& memory);

// "stage 1 needs 80.9 GiB of 80.0 GiB": where a plan overflows, for error messages.
std::string describe_overflow(const MemoryReport& report);

}  // namespace trainsim
