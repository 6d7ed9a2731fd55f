#pragma once
// A cluster of identical servers: the device, the fabric inside a server and the
// network between servers. Units are SI: FLOP/s, bytes, bytes/s, seconds.
#include <string>
#include <vector>

namespace trainsim {

// GEMM efficiency as a function of work size: efficiency(flops) rises from
// `small` towards `large` as a GEMM's FLOPs grow past `half_flops` (the size at
// which it reaches halfway). Fitted per hardware from published shape sweeps.
struct GemmEfficiency {
  double large = 0.8;       // fraction of peak reached by big, well-shaped GEMMs
  double small = 0.3;       // fraction of peak for tiny GEMMs
  double half_flops = 1e9;  // FLOPs at which efficiency is halfway between
  // Appended by the cost module: multiplier on efficiency when a GEMM's n or k is not a
  // multiple of 8 16-bit elements, 16 bytes (H100 SwiGLU d_ff=10922 ran at 0.68x of d_ff=10944;
  // A100 fp16 output widths at 0.66x; microbenchmarks.md 1b, 1c; 1.0 = no penalty).
  double misaligned_factor = 1.0;
  // FP8 GEMMs reach a smaller fraction of their (2x) peak than 16-bit ones:
  // MAMF_fp8 / peak_fp8 divided by MAMF_bf16 / peak_bf16.
  double fp8_relative_efficiency = 1.0;
  // Whether a GEMM accumulating into its output (beta 1: a weight gradient fused into the
  // gradient buffer) waits for that output's read after its math (Op::weight_grad_accumulator_read_bytes,
  // cost_model.cpp op_timing): measured where a sweep times accumulating GEMMs (B200), false
  // where none is stored, so the read stays hidden under the math as the roofline has it.
  bool accumulator_read_exposed = false;
  // Added for GEMM shapes (issue 15, sim/cost/gemm_shape.hpp): the library's largest output tile
  // (its halvings down to 64 are the smaller tiles it picks from) and the time per kernel that
  // does not shrink with the work. 0 = no shape model: efficiency by FLOPs above.
  int tile_m = 0;
  int tile_n = 0;
  double fixed_latency_s = 0;
};

struct DeviceSpec {
  std::string name;
  double peak_flops_bf16 = 0;   // dense tensor-core FLOP/s
  double peak_flops_fp16 = 0;
  double peak_flops_fp8 = 0;    // 0 when the device has no FP8 units
  // Added by issue 15: tensor cores that run MXFP8 (FP8 with one E8M0 scale per 32 elements,
  // OCP MX), Blackwell's; plan.fp8_recipe mxfp8 needs them.
  bool mxfp8 = false;
  double peak_flops_fp32 = 0;   // non-tensor FP32 (vector) FLOP/s
  double hbm_bytes = 0;         // capacity
  double hbm_bandwidth = 0;     // nominal bytes/s
  double memory_bound_efficiency = 0.8;  // achieved fraction of hbm_bandwidth for elementwise ops
  GemmEfficiency gemm;
  // Added for GEMM shapes (issue 15): units that each run one GEMM tile at a time (NVIDIA SMs,
  // Ascend cube cores); 0 = unknown, no tile and wave quantization.
  int compute_units = 0;
  double attention_efficiency = 0.6;
  // Measured efficiency (fwd+bwd, causal FLOPs halved as FlashAttention's benchmarks count)
  // of each fused kernel a plan can name (plan.attention_kernel); 0 = not measured on this
  // device, and a plan naming that kernel is refused.
  double attention_efficiency_flash1 = 0.0;
  double attention_efficiency_flash2 = 0.0;
  double attention_efficiency_flash3 = 0.0;
  double attention_efficiency_cudnn = 0.0;
  // Added for long context (issue 17): the fused kernel's published fwd+bwd throughput (TFLOPS,
  // causal FLOPs halved) against the key span one query block iterates over (the sequence, a
  // sliding window, a packed document), increasing lengths. The efficiencies above are scaled
  // by curve(span) / curve(attention_reference_length), the span they were measured at;
  // piecewise linear in log2(span), flat past either end. Empty: no length dependence.
  std::vector<int> attention_curve_lengths;
  std::vector<int> attention_curve_tflops;
  int attention_reference_length = 4096;
  // The fused kernel's fwd+bwd throughput (TFLOPS, causal FLOPs halved) against the work of one
  // kernel call (GFLOP of its causal forward: half the model's 2 b h s_q s_k (dqk + dv)),
  // increasing: a call with little work (few heads at batch 1, a CP ring step) leaves SMs idle
  // and its tail unbalanced. The efficiencies above are scaled by curve(work) / curve(last point),
  // the fullest call measured; piecewise linear in log2(work), flat past either end. Empty: no
  // dependence. A device carries this curve or the one by span, not both (the loader refuses
  // both: each measures the other's effect too).
  std::vector<int> attention_work_gflops;
  std::vector<int> attention_work_tflops;
  // Added by the MoE / MLA work (issue 18): the fused attention backward's efficiency at a QK
  // head dim above 128 (MLA's 192), relative to its efficiency at 128; 1 = not measured.
  double attention_wide_head_backward_factor = 1.0;
  // The fused kernel's fwd+bwd efficiency at QK head dim 64 relative to its efficiency at 128
  // (the dim the efficiencies above are measured at), for the default kernel and per kernel a
  // plan can name; 0 = not measured, head dims below 128 priced as 128. Head dims between
  // follow from it (cost_model.cpp attention_head_dim_factor).
  double attention_head64_factor = 0.0;
  double attention_head64_factor_flash1 = 0.0;
  double attention_head64_factor_flash2 = 0.0;
  double attention_head64_factor_flash3 = 0.0;
  double attention_head64_factor_cudnn = 0.0;
  // Added for attention without flash kernels (issue 15): achieved fraction of hbm_bandwidth
  // over the score-matrix passes (batched QK^T / PV with head-dim K or N, softmax, dropout);
  // 0 = memory_bound_efficiency.
  double eager_attention_memory_efficiency = 0.0;
  // Added for framework-dependent norms (issue 15): achieved fraction of hbm_bandwidth of
  // PyTorch's own layer_norm kernels (what a framework without a fused norm runs,
  // FrameworkEntry::eager_layer_norm), forward and backward (the input-gradient kernel and the
  // weight/bias-gradient reduction together), on the op's bytes (read x, write y; read x and
  // dy, write dx); 0 = memory_bound_efficiency (not measured on the device).
  double eager_layer_norm_forward_efficiency = 0.0;
  double eager_layer_norm_backward_efficiency = 0.0;
  // Fraction of the microbenchmarked GEMM / attention throughput a device sustains
  // through whole training steps (clocks fall under sustained power and heat); fitted
  // per hardware to the calibration set, 1 = the microbenchmarks hold.
  double sustained_compute_fraction = 1.0;
  // Compute time lost per second of in-layer collective (TP/CP/EP) run overlapped with it
  // (tp_comm_overlap, Ascend MC2): the collective shares the cores and HBM, and a tiled
  // overlap leaves its first and last tile exposed. 0 = overlap is free.
  double overlap_slowdown = 0.0;
  double kernel_launch_s = 5e-6;         // host dispatch per kernel
  double allocator_reserve_bytes = 0;    // runtime context, workspace, fragmentation
  double price_per_hour = 0;             // currency units per device-hour (0: unknown)
  double power_w = 0;                    // board power
};

enum class IntraNodeFabric { full_mesh, switched };

struct NodeSpec {
  int devices_per_node = 8;
  IntraNodeFabric fabric = IntraNodeFabric::switched;
  // switched: bandwidth from each device into the switch, per direction.
  // full_mesh: bandwidth of the one link between a pair of devices, per direction.
  double link_bandwidth = 0;
  double link_latency_s = 0;
  double achievable_fraction = 0.8;  // measured busbw / peak; 0.8 is seed 000's fallback
  bool in_switch_reduction = false;  // NVLink SHARP (NVLS) on H100-class switches
  // Appended by the cost module: with in_switch_reduction, an all-reduce moves each byte once
  // into and once out of the switch at this fraction of link_bandwidth (algbw / link_bandwidth;
  // H100 NVLS 480 GB/s busbw at 8 GPUs = 274 GB/s algbw of 450 -> 0.61).
  double in_switch_reduction_fraction = 0.6;
  // Appended by the cost module: NCCL prices each intra-node collective per protocol and takes
  // the fastest. The low-latency protocol (LL) pays link_latency per step but reaches only this
  // share of the achievable bandwidth; the bulk protocol (Simple) reaches all of it after a fixed
  // extra latency. The defaults (1, 0) make both the same: one protocol, as before.
  double ll_bandwidth_fraction = 1.0;
  double bulk_protocol_latency_s = 0;
};

enum class NetworkTopology { fat_tree, rail_optimized };

struct ClusterSpec {
  int nics_per_node = 8;
  double nic_bandwidth = 0;          // bytes/s per NIC per direction
  double hop_latency_s = 0;
  int hops = 3;                      // switch hops between two servers (leaf-spine-leaf)
  NetworkTopology topology = NetworkTopology::fat_tree;
  double oversubscription = 1.0;     // >= 1; 2 means half the bisection bandwidth
  double achievable_fraction = 0.8;
  double host_link_bandwidth = 0;    // device <-> host (PCIe) bytes/s, for offload
  // Parameters per second one server's CPUs update with DeepSpeed's vectorised CPU-Adam
  // (plan.offload_optimizer), shared by the server's devices; 0 = unknown.
  double host_cpu_adam_params_per_s = 0;
  // Appended by the cost module: per collective step across servers, the NIC and transport
  // software latency on top of hops x hop_latency_s (2 x A100 over HDR IB: ~19 us for an 8 B
  // all-reduce = 2 ring steps).
  double nic_latency_s = 0;
  // Appended by the cost module (issue 19, fabric tiers): servers whose NICs meet under one leaf
  // (rail) switch group. A group on at most this many servers stays below the spine and gets
  // full bandwidth; one that spans more crosses the spine and gets 1 / oversubscription of it.
  // 0 = unknown: every cross-server group pays the oversubscription (as before the key).
  int servers_per_leaf = 0;
};

// The hardware file's `variability:` block (issue 19): defaults of the scenario's keys of the
// same names, each with its source in the file; a scenario's own keys override them.
struct HardwareVariability {
  double device_speed_cv = 0;
  double step_jitter_cv = 0;
  double slow_card_rate = 0;
  double slow_card_speed = 1.0 / 1.5;
};

struct HardwareSpec {
  std::string name;
  std::string file;  // where it was loaded from
  DeviceSpec device;
  NodeSpec node;
  ClusterSpec cluster;
  HardwareVariability variability;
  double failure_rate_per_device_hour = 0;  // reliability.failure_rate: job interruptions per device-hour (0: unknown)
};

}  // namespace trainsim
