#include "trainsim/cost/cost_model.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "trainsim/common/error.hpp"
#include "trainsim/cost/gemm_shape.hpp"
#include "trainsim/cost/placement.hpp"
#include "trainsim/framework/framework.hpp"

namespace trainsim {

double peak_flops(const DeviceSpec& device, Precision precision) {
  switch (precision) {
    case Precision::fp16:
      return device.peak_flops_fp16 > 0 ? device.peak_flops_fp16 : device.peak_flops_bf16;
    case Precision::fp8:
      return device.peak_flops_fp8 > 0 ? device.peak_flops_fp8 : device.peak_flops_bf16;
    case Precision::bf16:
      break;
  }
  return device.peak_flops_bf16;
}

double mfu_peak_flops(const DeviceSpec& device, Precision precision) {
  return precision == Precision::fp16 ? peak_flops(device, Precision::fp16) : device.peak_flops_bf16;
}

double gemm_efficiency_for_flops(const GemmEfficiency& curve, double flops) {
  if (flops <= 0) return curve.small;
  const double half = std::max(curve.half_flops, 1.0);
  return curve.small + (curve.large - curve.small) * flops / (flops + half);
}

// Whether a GEMM dimension lets cuBLAS use its 16-byte-aligned tensor-core kernels: a multiple of
// 8 16-bit elements. NVIDIA's guide asks for 128 bytes (64 elements) on A100 (Matrix Multiplication
// Background User's Guide DU-09799-001, 2.2 "Tensor Core Requirements"), but the measured step is at
// 16 bytes on A100 and H100 alike (microbenchmarks.md 1c, 1b): on A100 in fp16, output widths that
// are multiples of 8, 16, 32 and 64 run on one curve once tile quantization is priced (0.869 /
// 0.888 / 0.889 / 0.870 of the tile model, EleutherAI cookbook sweep behind Anthony et al. 2024) and
// the others at 0.66 of it; on H100, d_ff 10848 (a multiple of 32) runs at full speed and 10922 (not
// of 8) at 0.68. How much a dimension that is not a multiple of 8 loses is the device's measured
// misaligned_factor. FP8 GEMMs (1-byte operands, 16 bytes = 16 elements) need no rule of their own:
// Transformer Engine asserts an FP8 GEMM operand's last dim divisible by 16 and its other dims by 8
// (transformer_engine/pytorch/utils.py assert_dim_for_fp8_exec).
namespace {
bool tensor_core_aligned(double dim) { return std::fmod(dim, 8.0) == 0.0; }
}  // namespace

double gemm_efficiency(const DeviceSpec& device, double m, double n, double k, double peak) {
  // With compute units and a tile in the hardware file the shape decides (tile and wave
  // quantization plus the kernel's fixed time, gemm_shape.hpp); else the FLOP curve.
  const double reference_peak = peak > 0 ? peak : device.peak_flops_bf16;
  double efficiency = has_gemm_shape_model(device) && reference_peak > 0
                          ? gemm_shape_efficiency(device, reference_peak, m, n, k, 1)
                          : gemm_efficiency_for_flops(device.gemm, 2 * m * n * k);
  if (!tensor_core_aligned(n) || !tensor_core_aligned(k)) efficiency *= device.gemm.misaligned_factor;
  return efficiency;
}

namespace {

ConfigError device_error(const std::string& key, const std::string& problem, const std::string& valid) {
  Diagnostic diagnostic;
  diagnostic.key_path = key;
  diagnostic.problem = problem;
  diagnostic.valid = valid;
  return ConfigError(diagnostic);
}

// Bytes per element of the scale tensors a recipe writes beside each FP8 copy.
double fp8_scale_bytes_per_element(Fp8Recipe recipe, Fp8Operand operand) {
  constexpr double kFp32Scale = 4.0;
  constexpr double kTile = 128.0;       // TE Float8BlockScaling: 1x128 tiles, 128x128 weight blocks
  constexpr double kMxBlock = 32.0;     // TE MXFP8BlockScaling: 32 values per E8M0 scale
  constexpr double kE8m0Scale = 1.0;
  switch (recipe) {
    case Fp8Recipe::blockwise:
      return kFp32Scale / (operand == Fp8Operand::weight ? kTile * kTile : kTile);
    case Fp8Recipe::mxfp8: return kE8m0Scale / kMxBlock;
    case Fp8Recipe::delayed:
    case Fp8Recipe::tensorwise: break;
  }
  return 0;  // one fp32 scale per tensor
}

// Efficiency of a batched GEMM (attention without flash kernels): the FLOP curve over the
// whole batch (one kernel), the misalignment factor over one item's n and k.
double batched_gemm_efficiency(const DeviceSpec& device, const Op& op, double flops, double peak) {
  // Shape model: one kernel over all (batch, head) pairs, each item's m x n output cut into
  // tiles that share the device's units (a head dim of 64 as n fills 64-wide tiles only).
  const double groups = std::max(1, op.gemm_groups);
  double efficiency =
      has_gemm_shape_model(device) && peak > 0
          ? gemm_shape_efficiency(device, peak, static_cast<double>(op.gemm_m) / groups,
                                  static_cast<double>(op.gemm_n), static_cast<double>(op.gemm_k), groups)
          : gemm_efficiency_for_flops(device.gemm, flops);
  if (!tensor_core_aligned(static_cast<double>(op.gemm_n)) || !tensor_core_aligned(static_cast<double>(op.gemm_k))) {
    efficiency *= device.gemm.misaligned_factor;
  }
  return efficiency;
}

// Attention backward FLOPs as counted (2x forward) over as the fused kernel runs them (2.5x).
constexpr double kCountedOverKernelBackward = 2.0 / 2.5;

// A measured curve's TFLOPS at `x`: piecewise linear in log2(x) between its points, flat past
// the first and the last.
double curve_at(const std::vector<int>& xs, const std::vector<int>& tflops, double x) {
  if (x <= xs.front()) return tflops.front();
  for (std::size_t i = 1; i < xs.size(); ++i) {
    if (x > xs[i]) continue;
    const double x0 = std::log2(static_cast<double>(xs[i - 1])), x1 = std::log2(static_cast<double>(xs[i]));
    const double w = (std::log2(x) - x0) / (x1 - x0);
    return tflops[i - 1] + w * (tflops[i] - tflops[i - 1]);
  }
  return tflops.back();
}

// The device attention curve's TFLOPS at `span` keys, between the published lengths (the
// benchmarks saturate: FlashAttention-3 and cuDNN on H100 gain under 0.5% from 8k to 16k).
double attention_curve_at(const DeviceSpec& device, double span) {
  return curve_at(device.attention_curve_lengths, device.attention_curve_tflops, span);
}

// The fused attention kernel's efficiency at the op's QK head dim, relative to head dim 128 (the
// dim device.attention_efficiency is measured at). FlashAttention / cuDNN backward kernels above
// 128 (MLA's 192 QK, 128 V) run smaller tiles and lose more than the forward does: on B200 the
// backward's measured efficiency at (192, 128) is 0.77-0.83 of (128, 128) at 16 to 128 heads
// while the forward's is 0.83-1.10 (hardware file's device.attention_wide_head_backward_factor,
// its source there). The forward keeps its rate. A separate factor so that efficiency by
// sequence length, priced in the attention case of op_timing, composes with it.
//
// Below 128 the kernel runs at its measured ratio at head dim 64 (device.attention_head64_factor:
// FlashAttention-2 and -3 lose there, 0.80-0.90, the matmuls doing less work per score element
// beside the online softmax's fixed part; FlashAttention-1 gains, 1.14 on A100), linear in the
// head dim between 64 and 128 and held below 64, where no kernel table reaches. One ratio for
// the forward and the backward together, as the efficiencies are quoted.
double attention_head_dim_factor(const DeviceSpec& device, const Op& op, bool backward) {
  constexpr double kMeasuredHeadDim = 128;
  constexpr double kNarrowHeadDim = 64;
  const auto d = static_cast<double>(op.attention_qk_head_dim);
  if (d > 0 && d < kMeasuredHeadDim) {
    const double r = device.attention_head64_factor;
    if (!(r > 0)) return 1.0;  // not measured
    const double toward_64 = (kMeasuredHeadDim - std::max(d, kNarrowHeadDim)) / (kMeasuredHeadDim - kNarrowHeadDim);
    return 1.0 + toward_64 * (r - 1.0);
  }
  if (!backward || d <= kMeasuredHeadDim) return 1.0;
  return device.attention_wide_head_backward_factor > 0 ? device.attention_wide_head_backward_factor : 1.0;
}

// HBM efficiency of an op's traffic: the score-matrix passes of attention without flash
// kernels and a LayerNorm run as PyTorch's own layer_norm run at their own measured rates
// (hardware file; the eager LayerNorm's backward, whose weight/bias-gradient reduction reads
// its inputs again, at its own), everything else at the elementwise rate.
double memory_efficiency(const Op& op, const DeviceSpec& device, bool backward) {
  if (op.score_matrix && device.eager_attention_memory_efficiency > 0) return device.eager_attention_memory_efficiency;
  if (op.eager_layer_norm) {
    const double eager =
        backward ? device.eager_layer_norm_backward_efficiency : device.eager_layer_norm_forward_efficiency;
    if (eager > 0) return eager;
  }
  return device.memory_bound_efficiency;
}

// One pass of one op: roofline, floored by the host issuing its kernels.
// backward: the op's backward pass (dgrad and, for a GEMM, wgrad together), which launches
// 2x the forward's kernels; the split weight-gradient pass is not one.
// serial_bytes: HBM traffic the pass's math waits for (weight_grad_serial_bytes), added to its
// compute time; the roofline's memory floor still counts all of `bytes`.
OpTiming op_timing(const Op& op, const DeviceSpec& device, Precision precision, double flops, double bytes,
                   int kernels, bool backward, double fp8_cast_bytes, double serial_bytes = 0) {
  double compute = 0;
  if (flops > 0) {
    double rate = 0;
    switch (op.op_class) {
      case OpClass::gemm: {
        // A grouped GEMM (MoE experts) is priced at the efficiency of one group's shape:
        // each expert's rows are their own tiles, so the size that decides how well the
        // device is used is gemm_m / gemm_groups, not the sum over experts.
        // Under the shape model each expert is its own kernel (Megatron's SequentialMLP loops
        // over the local experts), paying its own quantization and fixed time.
        const double groups = std::max(1, op.gemm_groups);
        // An FP8 plan's 16-bit GEMMs (Op::fp8_exempt) run at the BF16 peak and efficiency.
        const bool fp8 = runs_fp8(op, precision);
        const double peak = peak_flops(device, fp8 || precision != Precision::fp8 ? precision : Precision::bf16);
        const double efficiency =
            op.gemm_m > 0 && op.gemm_n > 0 && op.gemm_k > 0
                ? gemm_efficiency(device, static_cast<double>(op.gemm_m) / groups, static_cast<double>(op.gemm_n),
                                  static_cast<double>(op.gemm_k), peak)
                : gemm_efficiency_for_flops(device.gemm, op.forward_flops / groups);
        rate = peak * efficiency;
        if (fp8) rate *= device.gemm.fp8_relative_efficiency;
        break;
      }
      case OpClass::attention:
        if (op.gemm_m > 0) {
          // Attention without flash kernels: a batched GEMM (cuBLAS strided batched, one grid
          // over all b x heads pairs, so the batch fills the device as one GEMM of the same
          // FLOPs would), in 16 bit, computing the full s x s (no causal skip). A head dim
          // that is not a multiple of 8 pays the misalignment factor (the 16-byte rule above: 150
          // does, 144 does not; on A100 the cookbook's bmm at head dim 150 ran at 0.81 (QK^T) and
          // 0.72 (PV) of its aligned neighbours, microbenchmarks.md 1c, against the mm's 0.66).
          const double peak = peak_flops(device, precision == Precision::fp8 ? Precision::bf16 : precision);
          rate = peak * batched_gemm_efficiency(device, op, flops, peak);
          break;
        }
        // Flash attention runs in 16 bit even under FP8 training (Transformer Engine).
        // Decoder attention is causal: the fused kernel skips the masked half of the
        // s x s blocks, so it does half the FLOPs the model count (full s^2, as
        // Megatron counts MFU) charges. attention_efficiency is measured the same way
        // (FlashAttention's benchmarks halve causal FLOPs).
        // The efficiency is the reference span's; the op's spans (its sequence or CP chunk, a
        // window, packed documents) move it along the device's published curve.
        rate = 2.0 * peak_flops(device, precision == Precision::fp8 ? Precision::bf16 : precision) *
               device.attention_efficiency * attention_span_factor(device, op) * attention_work_factor(device, op) /
               std::max(op.load_factor, 1.0) *
               attention_head_dim_factor(device, op, backward);
        // The backward kernel recomputes the scores QK^T from the saved log-sum-exp before dV,
        // dP, dQ and dK: five matmuls where the op's count (the model's, 2x forward) has four.
        // The efficiencies are quoted on FlashAttention's count, bwd = 2.5 x fwd (Dao 2023,
        // FlashAttention-2 3.1.2; benchmark_flash_attention.py; microbenchmarks.md 2), so the
        // counted backward FLOPs run at 2 / 2.5 of the rate (npu_fusion_attention's backward
        // is the same FlashAttention-2 algorithm).
        if (backward) rate *= kCountedOverKernelBackward;
        break;
      case OpClass::memory_bound:
        rate = device.peak_flops_fp32;
        break;
    }
    // Tensor units slow down under sustained training load (power and thermal limits);
    // memory-bound ops are priced by bandwidth and keep their rate.
    if (op.op_class != OpClass::memory_bound) rate *= device.sustained_compute_fraction;
    if (rate > 0) {
      compute = flops / rate;
      if (serial_bytes > 0) compute += serial_bytes / (device.hbm_bandwidth * device.memory_bound_efficiency);
    } else if (op.op_class != OpClass::memory_bound) {
      throw device_error("device", "no peak FLOP/s or efficiency for op " + op.name,
                         "positive peak_flops and efficiencies");
    }
  }
  double memory = 0;
  if (bytes > 0) {
    const double bandwidth = device.hbm_bandwidth * memory_efficiency(op, device, backward);
    if (!(bandwidth > 0)) {
      throw device_error("device.hbm_bandwidth", "no HBM bandwidth for op " + op.name, "a positive bandwidth");
    }
    memory = bytes / bandwidth;
  }
  const double cast = fp8_cast_bytes > 0 ? fp8_cast_bytes / (device.hbm_bandwidth * device.memory_bound_efficiency) : 0;
  return OpTiming{compute, memory, kernels * device.kernel_launch_s, cast};
}

}  // namespace

double attention_length_factor(const DeviceSpec& device, double span) {
  if (device.attention_curve_lengths.empty() || !(span > 0)) return 1.0;
  return attention_curve_at(device, span) / attention_curve_at(device, device.attention_reference_length);
}

double attention_work_factor(const DeviceSpec& device, const Op& op) {
  if (device.attention_work_gflops.empty()) return 1.0;
  // The model counts the full s x s; the causal kernel does half, split over the op's calls.
  const double call_gflops = op.forward_flops / 2.0 / std::max(1, op.attention_kernel_calls) / 1e9;
  if (!(call_gflops > 0)) return 1.0;
  return curve_at(device.attention_work_gflops, device.attention_work_tflops, call_gflops) /
         device.attention_work_tflops.back();
}

double attention_span_factor(const DeviceSpec& device, const Op& op) {
  if (device.attention_curve_lengths.empty() || op.attention_spans.empty()) return 1.0;
  // Each span's FLOPs run at its own rate: the op's rate is the FLOP-weighted harmonic mean.
  double shares = 0, time = 0;
  for (const AttentionSpan& span : op.attention_spans) {
    shares += span.share;
    time += span.share / attention_length_factor(device, span.keys);
  }
  return time > 0 ? shares / time : 1.0;
}

double OpTiming::total_s() const { return std::max({compute_s, memory_s, launch_s}) + cast_s; }

const char* OpTiming::bound() const {
  if (launch_s > compute_s && launch_s > memory_s) return "launch";
  return memory_s > compute_s ? "memory" : "compute";
}

bool runs_fp8(const Op& op, Precision precision) {
  return precision == Precision::fp8 && op.op_class == OpClass::gemm && !op.fp8_exempt;
}

double fp8_copies_bytes_per_element(Fp8Recipe recipe, Fp8Operand operand) {
  constexpr double kRowAndColumn = 1.0 + 1.0;  // row-wise and column-wise FP8 copies
  return kRowAndColumn + 2.0 * fp8_scale_bytes_per_element(recipe, operand);
}

double fp8_quantize_bytes_per_element(Fp8Recipe recipe, Fp8Operand operand) {
  constexpr double kRead16 = 2.0;  // the 16-bit tensor, read once by the cast-transpose
  const double amax_pass = recipe == Fp8Recipe::tensorwise ? kRead16 : 0.0;
  return amax_pass + kRead16 + fp8_copies_bytes_per_element(recipe, operand);
}

Fp8Pricing fp8_pricing(const ParallelPlan& plan) {
  Fp8Pricing pricing;
  pricing.recipe = plan.fp8_recipe;
  // FP8 parameters are quantized from the fp32 master shard by the optimizer step (TE
  // cast_master_weights_to_fp8, its share of the step) and read as they are by the forward
  // (module/base.py quantize_weight returns a QuantizedTensor unchanged): no cast in the passes.
  if (plan.fp8_param_gather)
    pricing.weight_casts_per_forward = 0;
  else if (framework_entry(plan.framework).fp8_weights_cached_per_step.value)
    pricing.weight_casts_per_forward = 1.0 / std::max(1, plan.num_microbatches());
  return pricing;
}

Fp8GemmWeights fp8_gemm_weights(const LayerWorkload& layer, Precision precision) {
  Fp8GemmWeights w;
  for (const Op& op : layer.ops) {
    if (!runs_fp8(op, precision) || op.gemm_n <= 0 || op.gemm_k <= 0) continue;
    const double elements =
        std::max(1, op.gemm_groups) * static_cast<double>(op.gemm_n) * static_cast<double>(op.gemm_k);
    (op.routed_expert ? w.expert : w.dense) += elements;
  }
  return w;
}

double fp8_param_gather_bytes(Fp8Recipe recipe) {
  constexpr double kFp8RowwiseData = 1.0, kSixteenBit = 2.0;
  return recipe == Fp8Recipe::mxfp8 ? kSixteenBit : kFp8RowwiseData;
}

namespace {

// Bytes an FP8 GEMM weight's gather saves under plan.fp8_param_gather against `bytes_per_param`
// (0 without it): both gathers, the distributed optimizer's and FSDP's, read this one rule.
double fp8_gather_saving(const ParallelPlan& plan, double bytes_per_param) {
  if (!plan.fp8_param_gather || plan.precision != Precision::fp8) return 0.0;
  return std::max(0.0, bytes_per_param - fp8_param_gather_bytes(plan.fp8_recipe));
}

}  // namespace

ParamGatherBytes dp_param_gather_bytes(const ParallelPlan& plan, double dense_params, double expert_params,
                                       const std::vector<const LayerWorkload*>& layers) {
  constexpr double kSixteenBit = 2.0;
  ParamGatherBytes out{kSixteenBit * dense_params, kSixteenBit * expert_params};
  const double saved = fp8_gather_saving(plan, kSixteenBit);
  if (saved <= 0) return out;
  Fp8GemmWeights fp8;
  for (const LayerWorkload* layer : layers) {
    const Fp8GemmWeights w = fp8_gemm_weights(*layer, plan.precision);
    fp8.dense += w.dense;
    fp8.expert += w.expert;
  }
  // The caller's split rules: expert weights it counts as dense (an MTP module's) gather as dense.
  const double expert = std::min(fp8.expert, expert_params);
  const double dense = std::min(fp8.dense + (fp8.expert - expert), dense_params);
  out.dense -= saved * dense;
  out.expert -= saved * expert;
  return out;
}

double zero3_layer_gather_bytes(const ParallelPlan& plan, const LayerWorkload& layer, double bytes_per_param) {
  const double dense = layer.parameters - layer.expert_parameters;
  const double saved = fp8_gather_saving(plan, bytes_per_param);
  if (saved <= 0) return bytes_per_param * dense;
  return bytes_per_param * dense - saved * std::min(fp8_gemm_weights(layer, plan.precision).dense, dense);
}

double fp8_quantize_bytes(const Op& op, Precision precision, const Fp8Pricing& fp8, GemmPass pass) {
  if (!runs_fp8(op, precision) || op.gemm_m <= 0) return 0;
  const double m = static_cast<double>(op.gemm_m), n = static_cast<double>(op.gemm_n),
               k = static_cast<double>(op.gemm_k), groups = std::max(1, op.gemm_groups);
  const double activation = fp8_quantize_bytes_per_element(fp8.recipe, Fp8Operand::activation);
  switch (pass) {
    case GemmPass::forward:
      return activation * m * k + fp8.weight_casts_per_forward *
                                      fp8_quantize_bytes_per_element(fp8.recipe, Fp8Operand::weight) * groups * n * k;
    case GemmPass::backward: return activation * m * n;  // the output gradient, before dgrad and wgrad
    case GemmPass::backward_weight: break;
  }
  return 0;
}

namespace {

// The weight gradient's accumulation the backward waits for: the hook's separate add, and the
// fused GEMM's read of its output where the device exposes it.
double weight_grad_serial_bytes(const Op& op, const DeviceSpec& device) {
  return op.weight_grad_add_bytes + (device.gemm.accumulator_read_exposed ? op.weight_grad_accumulator_read_bytes : 0.0);
}

}  // namespace

OpTiming op_forward_timing(const Op& op, const DeviceSpec& device, Precision precision, const Fp8Pricing& fp8) {
  return op_timing(op, device, precision, op.forward_flops, op.forward_bytes, op.kernels, false,
                   fp8_quantize_bytes(op, precision, fp8, GemmPass::forward));
}

OpTiming op_backward_timing(const Op& op, const DeviceSpec& device, Precision precision, const Fp8Pricing& fp8) {
  return op_timing(op, device, precision, op.backward_flops, op.backward_bytes, 2 * op.kernels, true,
                   fp8_quantize_bytes(op, precision, fp8, GemmPass::backward), weight_grad_serial_bytes(op, device));
}

double op_forward_s(const Op& op, const DeviceSpec& device, Precision precision, const Fp8Pricing& fp8) {
  return op_forward_timing(op, device, precision, fp8).total_s();
}

double op_backward_s(const Op& op, const DeviceSpec& device, Precision precision, const Fp8Pricing& fp8) {
  return op_backward_timing(op, device, precision, fp8).total_s();
}

// The weight-gradient GEMM reads the output gradient's column-wise copy that the backward's
// cast-transpose wrote (the B part): no quantization of its own. The gradient's accumulation
// (weight_grad_serial_bytes) is the W pass's.
double op_backward_weight_s(const Op& op, const DeviceSpec& device, Precision precision, const Fp8Pricing& fp8) {
  if (op.backward_weight_flops <= 0) return 0;
  const double share = op.backward_flops > 0 ? std::min(1.0, op.backward_weight_flops / op.backward_flops) : 1.0;
  return op_timing(op, device, precision, op.backward_weight_flops, op.backward_bytes * share, op.kernels, false,
                   fp8_quantize_bytes(op, precision, fp8, GemmPass::backward_weight),
                   weight_grad_serial_bytes(op, device))
      .total_s();
}

CollectiveOptions collective_options(const ParallelPlan& plan) {
  CollectiveOptions options;
  const std::string& a = plan.collective_algorithm;
  options.algorithm = a == "ring"           ? CollectiveAlgorithm::ring
                      : a == "tree"         ? CollectiveAlgorithm::double_binary_tree
                      : a == "hierarchical" ? CollectiveAlgorithm::hierarchical
                      : a == "full_mesh"    ? CollectiveAlgorithm::full_mesh_direct
                                            : CollectiveAlgorithm::automatic;
  options.pipeline_tiers = plan.collective_pipeline_tiers;
  options.split_intra_over_network = plan.collective_split_intra;
  return options;
}

CostModel::CostModel(const HardwareSpec& hardware, const ParallelPlan& plan, int num_devices)
    : CostModel(hardware, plan, num_devices, collective_options(plan)) {}

AttentionKernelFigures attention_kernel_figures(const DeviceSpec& device, AttentionKernel kernel) {
  switch (kernel) {
    case AttentionKernel::device_default: return {device.attention_efficiency, device.attention_head64_factor};
    case AttentionKernel::flash1: return {device.attention_efficiency_flash1, device.attention_head64_factor_flash1};
    case AttentionKernel::flash2: return {device.attention_efficiency_flash2, device.attention_head64_factor_flash2};
    case AttentionKernel::flash3: return {device.attention_efficiency_flash3, device.attention_head64_factor_flash3};
    case AttentionKernel::cudnn: return {device.attention_efficiency_cudnn, device.attention_head64_factor_cudnn};
    case AttentionKernel::eager: break;
  }
  return {};
}

CostModel::CostModel(const HardwareSpec& hardware, const ParallelPlan& plan, int num_devices, CollectiveOptions options)
    : hardware_(hardware), plan_(plan), num_devices_(num_devices), options_(options), fp8_(fp8_pricing(plan)) {
  if (num_devices_ < 1) throw SimError("CostModel: num_devices < 1");
  // The fused attention op is priced at the plan's kernel: its measured efficiency and
  // head-dim-64 ratio take the place of the device default's (auto keeps them, eager has no
  // fused op to price).
  const AttentionKernel kernel = plan_.attention_kernel;
  if (kernel != AttentionKernel::device_default && kernel != AttentionKernel::eager) {
    const AttentionKernelFigures figures = attention_kernel_figures(hardware_.device, kernel);
    if (!(figures.efficiency > 0)) {
      throw device_error(std::string("device.attention_efficiency_") + to_string(kernel),
                         std::string("plan.attention_kernel ") + to_string(kernel) + " has no measured efficiency on " +
                             hardware_.device.name,
                         "a kernel whose device.attention_efficiency_<kernel> the hardware file sets, or auto");
    }
    hardware_.device.attention_efficiency = figures.efficiency;
    hardware_.device.attention_head64_factor = figures.head64_factor;
  }
}

double CostModel::forward_s(const Op& op) const { return op_forward_s(op, hardware_.device, plan_.precision, fp8_); }
double CostModel::backward_s(const Op& op) const {
  return op_backward_s(op, hardware_.device, plan_.precision, fp8_);
}
double CostModel::backward_weight_s(const Op& op) const {
  return op_backward_weight_s(op, hardware_.device, plan_.precision, fp8_);
}

GroupShape CostModel::shape_of(CommGroup group) const {
  return group_shape(plan_, num_devices_, hardware_.node.devices_per_node, hardware_.cluster.nics_per_node, group);
}

double CostModel::collective_s(CollectiveKind kind, CommGroup group, double bytes) const {
  return estimate_collective(hardware_, kind, shape_of(group), bytes, options_).time_s;
}

GroupCollective CostModel::group_collective(CollectiveKind kind, CommGroup group, double bytes) const {
  const GroupShape shape = shape_of(group);
  const CollectiveEstimate e = estimate_collective(hardware_, kind, shape, bytes, options_);
  return {e.time_s, shape.nodes > 1 ? e.inter_node_bytes : e.intra_node_bytes};
}

double CostModel::collective_s(const CommOp& comm) const { return collective_s(comm.kind, comm.group, comm.bytes); }

namespace {

// Ranks of one server whose next pipeline stage sits in another server; they all send at once.
int crossing_senders(const ParallelPlan& plan, int num_devices, int devices_per_node) {
  const int pp = plan.pipeline_model_parallel_size;
  if (pp <= 1) return 0;
  const std::vector<int> stage_ranks = group_ranks(plan, num_devices, CommGroup::pp, 0);
  const int stride = stage_ranks[1] - stage_ranks[0];
  int senders = 0;
  for (int rank = 0; rank < std::min(devices_per_node, num_devices); ++rank) {
    const int stage = (rank / stride) % pp;
    if (stage + 1 < pp && (rank + stride) / devices_per_node != rank / devices_per_node) ++senders;
  }
  return senders;
}

}  // namespace

bool CostModel::p2p_crosses_nodes() const {
  return crossing_senders(plan_, num_devices_, hardware_.node.devices_per_node) > 0;
}

double CostModel::p2p_s(double bytes) const {
  if (bytes <= 0) return 0;
  const int senders = crossing_senders(plan_, num_devices_, hardware_.node.devices_per_node);
  GroupShape pair;
  pair.ranks = 2;
  if (senders > 0) {
    // Every crossing sender of the server has its own flow; they share the NICs.
    pair.ranks_per_node = 1;
    pair.nodes = 2;
    pair.groups_per_node = senders;
  } else {
    pair.ranks_per_node = 2;
    pair.nodes = 1;
  }
  return estimate_collective(hardware_, CollectiveKind::send_recv, pair, bytes, options_).time_s;
}

double CostModel::memory_bound_s(double bytes) const {
  const double bandwidth = hardware_.device.hbm_bandwidth * hardware_.device.memory_bound_efficiency;
  if (!(bandwidth > 0)) throw SimError("memory_bound_s: no HBM bandwidth");
  return bytes / bandwidth;
}

}  // namespace trainsim
