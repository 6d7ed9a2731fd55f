#pragma once
// Time of one op on one device and of one collective on one group, in seconds.
//
// Compute: roofline with efficiency, max(FLOPs / (peak x efficiency), bytes / (HBM bandwidth x
// memory-bound efficiency)), floored by the host's kernel launches.
// Communication: each collective is priced by its algorithm on the tiers it crosses (the links
// inside a server, the NICs between servers), with the NICs shared among the groups that use them
// at the same moment. Bandwidths are peak x achievable fraction from the hardware file.
#include <string>
#include <vector>

#include "trainsim/hardware/hardware_spec.hpp"
#include "trainsim/model/workload.hpp"
#include "trainsim/plan/parallel_plan.hpp"

namespace trainsim {

// ring: NCCL-style ring over all ranks (across servers one ring per local rank, each through
//   that rank's NIC, as NCCL's channels do); inside one tier it is the textbook
//   2(n-1)/n * S / B + 2(n-1) * latency.
// double_binary_tree: NCCL's tree across servers (chain inside), latency O(log servers).
// hierarchical: reduce-scatter inside each server, all-reduce across servers (each rank on its
//   own NIC with 1/ranks_per_node of the data), all-gather inside (seed 001's four phases).
// full_mesh_direct: on a full-mesh server, each rank exchanges with every peer at once over
//   its own link (n-1 links in parallel per rank); across servers it is the intra-server part
//   of hierarchical.
// in_switch: NVLink SHARP (NVLS) all-reduce inside an NVSwitch server with in_switch_reduction.
// pairwise: all-to-all and send/recv (every rank sends straight to its peers).
enum class CollectiveAlgorithm {
  automatic,
  ring,
  double_binary_tree,
  hierarchical,
  full_mesh_direct,
  in_switch,
  pairwise
};

const char* to_string(CollectiveAlgorithm algorithm);

// Where a group's ranks sit: how many servers it spans, how many of its ranks share
// one server, and how many groups use the same NICs at the same moment.
struct GroupShape {
  int ranks = 1;
  int ranks_per_node = 1;             // ranks of this group inside one server
  int nodes = 1;                      // servers the group spans
  int concurrent_groups_per_nic = 1;  // groups crossing one NIC at once
  // Appended: groups of this kind with ranks in one server that communicate at the same
  // moment (devices_per_node / ranks_per_node when every group runs at once; 1 for a lone group).
  int groups_per_node = 1;
};

// HCCL / NCCL switches. The two seed-001 HCCL optimizations are off unless asked for.
struct CollectiveOptions {
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::automatic;  // forced, or chosen by size and shape
  // Seed 001 (1): slice the data so the intra-server (HCCS / NVLink) and inter-server (RoCE / IB)
  // phases of a hierarchical all-reduce run at the same time.
  bool pipeline_tiers = false;
  int pipeline_chunks = 8;  // slices of the pipelined hierarchical all-reduce
  // Seed 001 (2): an intra-server all-reduce sends part of its data through the (idle) NICs.
  bool split_intra_over_network = false;
};

// The plan's collective switches (plan.collective_algorithm, HCCL options).
CollectiveOptions collective_options(const ParallelPlan& plan);

// Time of one collective of `bytes` (buffer size as nccl-tests counts it).
double collective_time_s(const HardwareSpec& hardware, CollectiveKind kind, const GroupShape& group, double bytes,
                         CollectiveAlgorithm algorithm = CollectiveAlgorithm::automatic);

// The same with every option, and which algorithm was used (automatic: the fastest candidate,
// which is how NCCL's and HCCL's tuners choose: tree / direct for small, ring / hierarchical for big).
struct CollectiveEstimate {
  double time_s = 0;
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::ring;
  // Load on each tier, for link sharing and per-tier busy time / bandwidth use: bytes one
  // rank sends over the server fabric and through NICs (the split option is not reflected).
  double intra_node_bytes = 0;
  double inter_node_bytes = 0;
};
CollectiveEstimate estimate_collective(const HardwareSpec& hardware, CollectiveKind kind, const GroupShape& group,
                                       double bytes, const CollectiveOptions& options = {});

// nccl-tests bus bandwidth factor: busbw = algbw * factor (2(n-1)/n for all-reduce ...).
double bus_bandwidth_factor(CollectiveKind kind, int ranks);

// "all_reduce", ... (named so it cannot clash with a to_string the model module may add).
const char* collective_kind_name(CollectiveKind kind);

// Achieved bandwidths (bytes/s) the collectives use.
double intra_node_bandwidth(const HardwareSpec& hardware);  // one link (mesh) or one switch port, x achievable
double nic_bandwidth(const HardwareSpec& hardware);         // one NIC x achievable / oversubscription
// One NIC's bandwidth for a group spanning `nodes` servers: x achievable, / oversubscription only
// when the group crosses the spine (more servers than cluster.servers_per_leaf, or that key is 0).
double group_nic_bandwidth(const HardwareSpec& hardware, int nodes);
double inter_node_latency_s(const HardwareSpec& hardware);  // hops x hop latency + NIC latency

// Compute, pure functions of (op, hardware, precision).
double peak_flops(const DeviceSpec& device, Precision precision);
// The peak MFU and HFU divide by: the 16-bit tensor peak of the plan's 16-bit dtype (fp16 on a V100,
// which has no bf16 units); FP8 runs keep the BF16 peak, as their sources quote MFU.
double mfu_peak_flops(const DeviceSpec& device, Precision precision);
// Efficiency of one GEMM of shape m x n x k (2mnk FLOPs) at `peak` FLOP/s (0: the BF16 peak):
// from its shape when the hardware file gives compute units and a tile (gemm_shape.hpp), else
// from the device's FLOP curve; times the misalignment factor when n or k is not a multiple of 8 (16 bytes).
double gemm_efficiency(const DeviceSpec& device, double m, double n, double k, double peak = 0);
double gemm_efficiency_for_flops(const GemmEfficiency& curve, double flops);
// FP8 GEMMs (issue 15). Transformer Engine runs a decoder layer's Linears in FP8 under
// fp8_autocast; the LM head and the MoE router stay in 16 bit (Op::fp8_exempt), and so does
// the fused attention kernel (no FP8 attention priced). True when `op` runs as an FP8 GEMM.
bool runs_fp8(const Op& op, Precision precision);
// What an FP8 GEMM quantizes: an activation or an output gradient (1x128 / 1x32 blocks), or a
// weight (128x128 blocks under blockwise).
enum class Fp8Operand { activation, weight };
// HBM bytes per element of a 16-bit tensor that the recipe's kernels move to quantize it for an
// FP8 GEMM and its backward: TE's fused cast-transpose reads the tensor once (2 bytes) and writes
// both FP8 copies, row-wise for this GEMM and column-wise for the other pass (1 + 1 bytes;
// nvte_cast_transpose, and the block recipes quantize both directions from the 16-bit input);
// tensorwise reads it once more for its amax first (quantizer.cpp Float8CurrentScalingQuantizer::
// quantize_impl: nvte_compute_amax, then nvte_quantize_v2); blockwise writes one fp32 scale per
// 128 elements of each copy (per 128x128 block of a weight; TE Float8BlockScaling
// x/grad_block_scaling_dim 1, w_block_scaling_dim 2), mxfp8 one E8M0 byte per 32 (TE
// MXFP8BlockScaling). Delayed scaling's amax is taken inside the cast kernel: no extra pass.
double fp8_quantize_bytes_per_element(Fp8Recipe recipe, Fp8Operand operand);
// Bytes per element of the two FP8 copies of a tensor and their scales: what the cast writes
// (the memory model counts what TE keeps of each weight from its own shapes: memory_model.hpp
// te_fp8_weight_bytes).
double fp8_copies_bytes_per_element(Fp8Recipe recipe, Fp8Operand operand);
// How the plan runs its FP8 GEMMs: the recipe, and the weight casts per forward of a GEMM.
struct Fp8Pricing {
  Fp8Recipe recipe = Fp8Recipe::delayed;
  // 1 / micro-batches when the framework casts each weight once per step (its framework entry's
  // fp8_weights_cached_per_step), or never (plan.fp8_param_gather: the weights are FP8 parameters,
  // quantized by the optimizer step, not in the forward); 1: every forward casts (TE's default).
  double weight_casts_per_forward = 1;
};
Fp8Pricing fp8_pricing(const ParallelPlan& plan);
// The parameters of a layer's FP8 GEMM weights (runs_fp8: not the LM head, the router or a
// first_last_layers_bf16 layer's Linears), split as the optimizer shards them: the routed
// experts' (over the expert data-parallel group) and the rest.
struct Fp8GemmWeights {
  double dense = 0;
  double expert = 0;
};
Fp8GemmWeights fp8_gemm_weights(const LayerWorkload& layer, Precision precision);
// Bytes per parameter the distributed optimizer's all-gather moves for an FP8 GEMM weight under
// plan.fp8_param_gather (Megatron-Core --fp8-param-gather): the FP8 parameter's row-wise data (1)
// for the per-tensor and block recipes, whose raw data the DDP buffer holds (param_and_grad_buffer.py
// param_dtype torch.uint8; TE tensor/utils.py replace_raw_data); mxfp8 gathers the 16-bit values
// (2) through the gradient buffer and quantizes after (reuse_grad_buf_for_mxfp8_param_ag: TE's
// replace_raw_data raises for MXFP8Tensor), so only its memory changes.
double fp8_param_gather_bytes(Fp8Recipe recipe);
// The distributed optimizer's parameter all-gather of one stage, bytes of its dense and expert
// parts: 2 per parameter, fp8_param_gather_bytes for the FP8 GEMM weights under
// plan.fp8_param_gather. `dense_params` / `expert_params` are the caller's split of the stage's
// parameters; `layers` the layers the stage holds (one entry per held layer, head included).
struct ParamGatherBytes {
  double dense = 0;
  double expert = 0;
};
ParamGatherBytes dp_param_gather_bytes(const ParallelPlan& plan, double dense_params, double expert_params,
                                       const std::vector<const LayerWorkload*>& layers);
// Bytes a ZeRO-3 / FSDP all-gather of one layer's dense parameters moves: `bytes_per_param` each
// (the framework's sharded_param_gather_bytes), the FP8 GEMM weights at fp8_param_gather_bytes
// under plan.fp8_param_gather (plan_check allows it with ZeRO-3 only where the framework gathers
// FP8 weights unit by unit: torchao's FSDP2 float8 all-gather). The memory model's gathered units
// and the replay's gathers read it.
double zero3_layer_gather_bytes(const ParallelPlan& plan, const LayerWorkload& layer, double bytes_per_param);
// HBM bytes an FP8 GEMM's quantization kernels move in one pass (0 for any other op):
// forward the input (m x k) and the weights' share (groups x n x k x weight_casts_per_forward),
// backward the output gradient (m x n); the weight-gradient pass quantizes nothing of its own.
enum class GemmPass { forward, backward, backward_weight };
double fp8_quantize_bytes(const Op& op, Precision precision, const Fp8Pricing& fp8, GemmPass pass);

// The roofline terms of one pass of one op; its time is the largest of compute, memory and
// launch, plus the FP8 cast.
struct OpTiming {
  double compute_s = 0;  // FLOPs at the op class's sustained rate
  double memory_s = 0;   // HBM bytes at the achieved bandwidth
  double launch_s = 0;   // kernels x host dispatch latency
  double cast_s = 0;     // FP8 quantization kernels (fp8_quantize_bytes at the elementwise HBM rate)
  double total_s() const;
  const char* bound() const;  // "compute", "memory" or "launch": the largest term
};
OpTiming op_forward_timing(const Op& op, const DeviceSpec& device, Precision precision, const Fp8Pricing& fp8 = {});
OpTiming op_backward_timing(const Op& op, const DeviceSpec& device, Precision precision, const Fp8Pricing& fp8 = {});


double op_forward_s(const Op& op, const DeviceSpec& device, Precision precision, const Fp8Pricing& fp8 = {});
double op_backward_s(const Op& op, const DeviceSpec& device, Precision precision, const Fp8Pricing& fp8 = {});
double op_backward_weight_s(const Op& op, const DeviceSpec& device, Precision precision, const Fp8Pricing& fp8 = {});

// One collective of a rank group: its time, and the bytes one rank moves on the tier the
// group's collective is counted on (through its NIC when the group spans servers, else over
// the server fabric) by the chosen algorithm: what the per-tier bandwidth use divides by
// (seed 000: transferred bytes / transit time).
struct GroupCollective {
  double time_s = 0;
  double tier_bytes = 0;
};

// What the hardware file measured of a fused attention kernel on `device`: its fwd+bwd
// efficiency (auto is device.attention_efficiency, the others device.attention_efficiency_<kernel>)
// and its ratio at head dim 64 (device.attention_head64_factor[_<kernel>]); 0 where not measured.
// eager has neither (it is priced as batched GEMMs and HBM passes).
struct AttentionKernelFigures {
  double efficiency = 0;
  double head64_factor = 0;
};
AttentionKernelFigures attention_kernel_figures(const DeviceSpec& device, AttentionKernel kernel);
inline double attention_kernel_efficiency(const DeviceSpec& device, AttentionKernel kernel) {
  return attention_kernel_figures(device, kernel).efficiency;
}

// Added for long context (issue 17): a fused attention kernel's throughput at `span` keys
// over its throughput at the device's reference span (device.attention_curve_*; 1 without a
// curve), and an op's factor over its spans (FLOP-weighted harmonic mean).
double attention_length_factor(const DeviceSpec& device, double span);
double attention_span_factor(const DeviceSpec& device, const Op& op);
// The fused kernel's efficiency by the work of one call (device.attention_work_*), relative to
// the curve's fullest point; 1 without a curve.
double attention_work_factor(const DeviceSpec& device, const Op& op);

class CostModel {
 public:
  CostModel(const HardwareSpec& hardware, const ParallelPlan& plan, int num_devices);
  CostModel(const HardwareSpec& hardware, const ParallelPlan& plan, int num_devices, CollectiveOptions options);

  double forward_s(const Op& op) const;
  double backward_s(const Op& op) const;
  double backward_weight_s(const Op& op) const;  // the weight-gradient part of backward_s
  double collective_s(const CommOp& comm) const;
  double collective_s(CollectiveKind kind, CommGroup group, double bytes) const;
  // Pipeline send/recv of `bytes` between neighbouring stages.
  double p2p_s(double bytes) const;
  // Memory-bound time of streaming `bytes` through HBM (optimizer step, ...).
  double memory_bound_s(double bytes) const;
  GroupShape shape_of(CommGroup group) const;
  GroupCollective group_collective(CollectiveKind kind, CommGroup group, double bytes) const;
  // True when some pipeline neighbours sit in different servers.
  bool p2p_crosses_nodes() const;

  const HardwareSpec& hardware() const { return hardware_; }
  const CollectiveOptions& options() const { return options_; }

 private:
  HardwareSpec hardware_;
  ParallelPlan plan_;
  int num_devices_;
  CollectiveOptions options_;
  Fp8Pricing fp8_;
};

}  // namespace trainsim
