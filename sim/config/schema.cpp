// The key tables of model, hardware and scenario files, and the validation walker they drive.
#include "trainsim/config/schema.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string_view>

#include "trainsim/common/text.hpp"
#include "trainsim/schedule/schedule_entry.hpp"

#include "validate.hpp"

namespace trainsim {

namespace {

using T = ValueType;
using D = Dimension;

// Upper bounds. Every key has a finite one, so every number the simulator derives from the
// input is finite (and every integer fits an int: see checked_int in scenario_loader.cpp).
// Each bound refuses no published model or device, with ample headroom over the largest:
//
// Models (largest shipped or published): Megatron-1T h 25600, 128 layers, 160 heads, ffn
// 102400 (models/megatron-1t.yaml); LLaMA-3 405B h 16384, 126 layers, ffn 53248; PaLM 540B
// vocab 256k, Gemma 256000; DeepSeek-V3 256 routed experts, top-8; Llama 4 Scout 10M context.
constexpr double kMaxWidth = 262144;          // 2^18: h, 10x Megatron-1T, 16x LLaMA-3 405B
constexpr double kMaxLayers = 16384;          // 128x Megatron-1T / LLaMA-3 405B
constexpr double kMaxHeads = 16384;           // 100x Megatron-1T's 160 (a head is >= 1 column of h)
constexpr double kMaxHeadDim = 16384;         // 64x the widest head in use (256, Gemma)
constexpr double kMaxFfn = 4194304;           // 2^22: 41x Megatron-1T's 102400, 79x LLaMA-3 405B
constexpr double kMaxVocab = 16777216;        // 2^24: 64x the 256k vocabularies of PaLM / Gemma
constexpr double kMaxPositions = 1073741824;  // 2^30: 100x Llama 4 Scout's 10M tokens
constexpr double kMaxExperts = 65536;         // 256x DeepSeek-V3's 256
// Devices: B200 dense BF16 2.25e15 FLOP/s, 192 GB HBM at 8 TB/s, 1 kW; NVLink 5 900 GB/s per
// direction; 800 Gb/s NICs; PCIe 6 x16 128 GB/s.
// Lower bounds keep the step time of a real scenario far from the replay's integer picosecond
// range (~107 days); they refuse nothing that trains.
constexpr double kMinFlops = 1e9;              // 1 GFLOP/s: one CPU core does 10-100x more
constexpr double kMinHbmBandwidth = 1e9;       // 1 GB/s: one DDR3 channel does 10x more
constexpr double kMinLinkBandwidth = 1e8;      // 100 MB/s: ~1 Gb/s Ethernet, the slowest link in use
constexpr double kMaxFlops = 1e18;             // 1 EFLOP/s per device: 440x a B200
constexpr double kMaxBytes = 1e15;              // 1 PB: 5000x a B200's 192 GB of HBM
constexpr double kMaxHbmBandwidth = 1e15;      // 1 PB/s: 125x a B200's 8 TB/s
constexpr double kMaxLinkBandwidth = 1e14;     // 100 TB/s: 110x NVLink 5, 1000x an 800 Gb/s NIC
constexpr double kMaxPower = 1e6;              // 1 MW per device: 1000x a B200
constexpr double kMaxPrice = 1e6;              // per device-hour: 1e5x cloud H100 prices (~$2-10)
constexpr double kMaxKernelLaunch = 0.01;      // 10 ms: 2000x a launch when the CPU is ahead (2.5-5 us, microbenchmarks.md 5)

// clang-format off
const std::vector<KeySpec> kModelKeys = {
  {"name", T::string, D::none, "", false, 0, 0, "", "model name (default: file name)"},
  {"source", T::string, D::none, "", false, 0, 0, "", "where the dimensions were published"},
  {"model_type", T::string, D::none, "", false, 0, 0, "", "HF model_type (informational)"},
  {"hidden_size", T::integer, D::none, "", true, 1, kMaxWidth, "", "model width h"},
  {"num_hidden_layers", T::integer, D::none, "", true, 1, kMaxLayers, "", "transformer layers l"},
  {"num_attention_heads", T::integer, D::none, "", true, 1, kMaxHeads, "", "query heads a"},
  {"num_key_value_heads", T::integer, D::none, "", false, 1, kMaxHeads, "", "KV heads (GQA/MQA); default num_attention_heads"},
  {"head_dim", T::integer, D::none, "", false, 1, kMaxHeadDim, "", "per-head width; default hidden_size / num_attention_heads"},
  {"intermediate_size", T::integer, D::none, "", true, 1, kMaxFfn, "", "dense MLP width"},
  {"vocab_size", T::integer, D::none, "", true, 1, kMaxVocab, "", "vocabulary V"},
  {"max_position_embeddings", T::integer, D::none, "", false, 1, kMaxPositions, "",
   "longest trained sequence; required with learned positions (rotary and ALiBi models run plan.seq_length)"},
  {"hidden_act", T::choice, D::none, "gelu", false, 0, 0,
   "gelu|gelu_new|gelu_fast|gelu_pytorch_tanh|quick_gelu|relu|silu|swish|swiglu|geglu", "MLP activation; silu/swish/swiglu/geglu imply a gated MLP"},
  {"gated_mlp", T::boolean, D::none, "", false, 0, 0, "", "three MLP matrices; default implied by hidden_act"},
  {"tie_word_embeddings", T::boolean, D::none, "false", false, 0, 0, "", "LM head shares the embedding matrix"},
  {"learned_position_embeddings", T::boolean, D::none, "false", false, 0, 0, "", "GPT-style absolute positions (else rotary); position_embedding says it too"},
  {"position_embedding", T::choice, D::none, "", false, 0, 0, "rope|learned|alibi|none",
   "position encoding: rotary, a learned table, ALiBi score biases (BLOOM), or none; default: learned if learned_position_embeddings, else rope"},
  {"use_bias", T::boolean, D::none, "false", false, 0, 0, "", "linear layers carry bias vectors"},
  {"norm", T::choice, D::none, "rmsnorm", false, 0, 0, "rmsnorm|layernorm", "normalization"},
  {"num_local_experts", T::integer, D::none, "", false, 1, kMaxExperts, "", "MoE experts (Mixtral name)"},
  {"num_experts", T::integer, D::none, "", false, 1, kMaxExperts, "", "MoE experts (Qwen-MoE name)"},
  {"n_routed_experts", T::integer, D::none, "", false, 1, kMaxExperts, "", "MoE experts (DeepSeek name)"},
  {"num_experts_per_tok", T::integer, D::none, "", false, 1, kMaxExperts, "", "MoE top-k"},
  {"moe_intermediate_size", T::integer, D::none, "", false, 1, kMaxFfn, "", "per-expert FFN width; default intermediate_size"},
  {"n_shared_experts", T::integer, D::none, "", false, 0, kMaxExperts, "", "always-active shared experts (DeepSeek)"},
  {"shared_expert_intermediate_size", T::integer, D::none, "", false, 0, kMaxFfn, "", "width of each shared expert (Qwen2-MoE)"},
  {"first_k_dense_replace", T::integer, D::none, "", false, 0, kMaxLayers, "", "leading dense layers (DeepSeek)"},
  // Issue 18: multi-head latent attention (DeepSeek-V2/V3 config.json names; kv_lora_rank switches it on),
  // group-limited routing and multi-token prediction. Widths are bounded like head_dim / hidden_size.
  {"q_lora_rank", T::integer, D::none, "", false, 1, kMaxWidth, "", "MLA: query compression rank (unset or null: queries projected from h directly)"},
  {"kv_lora_rank", T::integer, D::none, "", false, 1, kMaxWidth, "", "MLA: key-value compression rank; set: the attention block is MLA"},
  {"qk_nope_head_dim", T::integer, D::none, "", false, 1, kMaxHeadDim, "", "MLA: per-head query/key width without rotary"},
  {"qk_rope_head_dim", T::integer, D::none, "", false, 1, kMaxHeadDim, "", "MLA: per-head decoupled rotary query/key width (the rotary key is shared by the heads)"},
  {"v_head_dim", T::integer, D::none, "", false, 1, kMaxHeadDim, "", "MLA: per-head value width"},
  {"n_group", T::integer, D::none, "", false, 1, kMaxExperts, "", "group-limited routing: expert groups (DeepSeek; as many as EP nodes: node-limited)"},
  {"topk_group", T::integer, D::none, "", false, 1, kMaxExperts, "", "group-limited routing: groups a token may use (DeepSeek-V3: 4 nodes)"},
  {"num_nextn_predict_layers", T::integer, D::none, "", false, 0, 64, "", "multi-token-prediction modules (DeepSeek-V3: 1), each a transformer layer, a projection and the LM head once more"},
  // Long context (issue 17): sliding-window attention under the Hugging Face names.
  {"sliding_window", T::integer, D::none, "", false, 1, kMaxPositions, "", "causal sliding-window span in tokens (Mistral); unset or null: full attention"},
  {"use_sliding_window", T::boolean, D::none, "", false, 0, 0, "", "Qwen2: false turns sliding_window off"},
  {"max_window_layers", T::integer, D::none, "", false, 0, kMaxLayers, "", "Qwen2: layers from this index on use the window"},
  {"sliding_window_pattern", T::integer, D::none, "", false, 1, kMaxLayers, "", "Gemma-2/3: every Nth layer is global, the others use the window"},
  {"sliding_window_layers", T::int_list, D::none, "", false, 0, 1, "", "per layer, 1: the window, 0: full attention (from HF layer_types)"},
  // Past num_experts / top-k an expert takes every token, so kMaxExperts covers every model.
  {"capacity_factor", T::number, D::none, "1.0", false, 0.01, kMaxExperts, "", "MoE capacity: every expert padded to this many times its balanced share"},
};

const std::vector<KeySpec> kHardwareKeys = {
  {"name", T::string, D::none, "", true, 0, 0, "", "hardware name"},
  {"source", T::string, D::none, "", false, 0, 0, "", "where the numbers come from"},
  {"device.name", T::string, D::none, "", true, 0, 0, "", "accelerator name; one starting 'Ascend' (or a file name starting 'ascend') is an Ascend NPU: HCCL's figures, MindSpeed allowed"},
  {"device.peak_flops_bf16", T::quantity, D::flops_rate, "", true, kMinFlops, kMaxFlops, "", "dense BF16 tensor FLOP/s"},
  {"device.peak_flops_fp16", T::quantity, D::flops_rate, "", false, kMinFlops, kMaxFlops, "", "dense FP16 FLOP/s; default = bf16"},
  {"device.peak_flops_fp8", T::quantity, D::flops_rate, "0FLOPS", false, 0, kMaxFlops, "", "dense FP8 FLOP/s; 0 = no FP8 units"},
  {"device.mxfp8", T::boolean, D::none, "false", false, 0, 0, "", "tensor cores run MXFP8 (E8M0 scale per 32 elements; Blackwell); plan.fp8_recipe mxfp8 needs it"},
  {"device.peak_flops_fp32", T::quantity, D::flops_rate, "", true, kMinFlops, kMaxFlops, "", "FP32 (vector) FLOP/s"},
  {"device.hbm_bytes", T::quantity, D::bytes, "", true, 1, kMaxBytes, "", "device memory capacity"},
  {"device.hbm_bandwidth", T::quantity, D::bandwidth, "", true, kMinHbmBandwidth, kMaxHbmBandwidth, "", "nominal HBM bandwidth"},
  {"device.memory_bound_efficiency", T::number, D::none, "0.8", false, 0.01, 1, "", "achieved fraction of hbm_bandwidth, elementwise ops"},
  {"device.gemm.large", T::number, D::none, "0.8", false, 0.01, 1, "", "GEMM efficiency for large shapes"},
  {"device.gemm.small", T::number, D::none, "0.3", false, 0.01, 1, "", "GEMM efficiency for tiny shapes"},
  {"device.gemm.half_flops", T::number, D::none, "1e9", false, 1, kMaxFlops, "", "GEMM FLOPs at which efficiency is halfway"},
  {"device.gemm.accumulator_read_exposed", T::boolean, D::none, "false", false, 0, 0, "", "a GEMM accumulating into its output (a weight gradient fused into the fp32 gradient buffer) reads the output after its math, not under it (measured on B200)"},
  {"device.gemm.misaligned_factor", T::number, D::none, "1", false, 0.01, 1, "", "efficiency factor when n or k is not a multiple of 8 (16 bytes in 16 bit)"},
  {"device.gemm.fp8_relative_efficiency", T::number, D::none, "1", false, 0.01, 1, "", "FP8 GEMM efficiency relative to BF16 (MAMF ratio)"},
  {"device.gemm.tile_m", T::integer, D::none, "0", false, 0, 1024, "", "largest GEMM output tile, rows (its halvings down to 64 are the smaller tiles); 0 = no shape model"},
  {"device.gemm.tile_n", T::integer, D::none, "0", false, 0, 1024, "", "largest GEMM output tile, columns; 0 = no shape model"},
  {"device.gemm.fixed_latency", T::quantity, D::time, "0s", false, 0, 0.01, "", "GEMM kernel time that does not shrink with its work (ramp-up, tail)"},
  {"device.compute_units", T::integer, D::none, "0", false, 0, 100000, "", "units running one GEMM tile each (SMs, cube cores); 0 = no tile and wave quantization"},
  {"device.sustained_compute_fraction", T::number, D::none, "1", false, 0.05, 1, "", "share of microbenchmarked GEMM/attention speed sustained in training"},
  {"device.overlap_slowdown", T::number, D::none, "0", false, 0, 1, "", "compute time lost per second of TP/CP/EP collective overlapped with it"},
  {"device.attention_efficiency", T::number, D::none, "0.6", false, 0.01, 1, "", "fused attention, fraction of peak"},
  {"device.attention_efficiency_flash1", T::number, D::none, "0", false, 0, 1, "", "FlashAttention-1 fwd+bwd, fraction of peak (causal FLOPs halved); 0 = not measured"},
  {"device.attention_efficiency_flash2", T::number, D::none, "0", false, 0, 1, "", "FlashAttention-2 fwd+bwd, fraction of peak (causal FLOPs halved); 0 = not measured"},
  {"device.attention_efficiency_flash3", T::number, D::none, "0", false, 0, 1, "", "FlashAttention-3 fwd+bwd, fraction of peak (causal FLOPs halved); 0 = not measured"},
  {"device.attention_efficiency_cudnn", T::number, D::none, "0", false, 0, 1, "", "cuDNN fused attention fwd+bwd, fraction of peak (causal FLOPs halved); 0 = not measured"},
  // Long context (issue 17): the fused kernel's published throughput by key span (hardware/sources/microbenchmarks.md 2).
  {"device.attention_curve_lengths", T::int_list, D::none, "", false, 1, kMaxPositions, "", "key spans (tokens, increasing) of the published attention curve"},
  {"device.attention_curve_tflops", T::int_list, D::none, "", false, 1, 1e6, "", "published fused-attention fwd+bwd TFLOPS (causal FLOPs halved) at each span of attention_curve_lengths"},
  {"device.attention_work_gflops", T::int_list, D::none, "", false, 1, 1e9, "", "forward GFLOP of one fused-attention kernel call (causal), increasing, at which attention_work_tflops was measured"},
  {"device.attention_work_tflops", T::int_list, D::none, "", false, 1, 1e6, "", "measured fused-attention fwd+bwd TFLOPS (causal FLOPs halved) at each work of attention_work_gflops; the efficiencies scale by curve(work) / curve(last)"},
  {"device.attention_reference_length", T::integer, D::none, "4096", false, 1, kMaxPositions, "", "key span the attention_efficiency keys were measured at; the curve scales them by curve(span) / curve(this)"},
  {"device.attention_wide_head_backward_factor", T::number, D::none, "1", false, 0.05, 1, "", "fused attention backward efficiency at a QK head dim above 128 (MLA 192) relative to 128; 1 = not measured"},
  {"device.attention_head64_factor", T::number, D::none, "0", false, 0, 2, "", "fused attention (the default kernel) fwd+bwd efficiency at QK head dim 64 relative to 128 (causal); linear between 64 and 128, held below 64; 0 = not measured (below 128 priced as 128)"},
  {"device.attention_head64_factor_flash1", T::number, D::none, "0", false, 0, 2, "", "FlashAttention-1 fwd+bwd efficiency at QK head dim 64 relative to 128 (causal); linear between 64 and 128, held below 64; 0 = not measured (below 128 priced as 128)"},
  {"device.attention_head64_factor_flash2", T::number, D::none, "0", false, 0, 2, "", "FlashAttention-2 fwd+bwd efficiency at QK head dim 64 relative to 128 (causal); linear between 64 and 128, held below 64; 0 = not measured (below 128 priced as 128)"},
  {"device.attention_head64_factor_flash3", T::number, D::none, "0", false, 0, 2, "", "FlashAttention-3 fwd+bwd efficiency at QK head dim 64 relative to 128 (causal); linear between 64 and 128, held below 64; 0 = not measured (below 128 priced as 128)"},
  {"device.attention_head64_factor_cudnn", T::number, D::none, "0", false, 0, 2, "", "cuDNN fused attention fwd+bwd efficiency at QK head dim 64 relative to 128 (causal); linear between 64 and 128, held below 64; 0 = not measured (below 128 priced as 128)"},
  {"device.eager_attention_memory_efficiency", T::number, D::none, "0", false, 0, 1, "", "achieved fraction of hbm_bandwidth over the s x s score passes of attention without flash kernels; 0 = memory_bound_efficiency"},
  {"device.eager_layer_norm_forward_efficiency", T::number, D::none, "0", false, 0, 1, "", "achieved fraction of hbm_bandwidth of PyTorch's own layer_norm forward (frameworks without a fused norm); 0 = memory_bound_efficiency"},
  {"device.eager_layer_norm_backward_efficiency", T::number, D::none, "0", false, 0, 1, "", "achieved fraction of hbm_bandwidth of PyTorch's own layer_norm backward (input and weight/bias gradients) on 3 tensors' bytes; 0 = memory_bound_efficiency"},
  {"device.kernel_launch", T::quantity, D::time, "5us", false, 0, kMaxKernelLaunch, "", "the driver's host time launching one kernel (the framework's eager dispatch per kernel is added from the framework table; a graph-captured layer pays one launch a pass)"},
  {"device.allocator_reserve", T::quantity, D::bytes, "0B", false, 0, kMaxBytes, "", "runtime context, workspace, fragmentation"},
  {"device.price_per_hour", T::number, D::none, "0", false, 0, kMaxPrice, "", "currency units per device-hour (0: unknown)"},
  {"device.power", T::quantity, D::power, "0W", false, 0, kMaxPower, "", "board power"},
  {"node.devices_per_node", T::integer, D::none, "8", false, 1, 1024, "", "devices in one server"},
  {"node.fabric", T::choice, D::none, "switched", false, 0, 0, "full_mesh|switched", "intra-node fabric"},
  {"node.link_bandwidth", T::quantity, D::bandwidth, "", true, kMinLinkBandwidth, kMaxLinkBandwidth, "", "switched: per device into the switch; full_mesh: per pair link (per direction)"},
  {"node.link_latency", T::quantity, D::time, "", true, 0, 1, "", "intra-node link latency"},
  {"node.achievable_fraction", T::number, D::none, "0.8", false, 0.01, 1, "", "measured busbw / peak inside a node"},
  {"node.in_switch_reduction", T::boolean, D::none, "false", false, 0, 0, "", "NVLink SHARP (NVLS)"},
  {"node.in_switch_reduction_fraction", T::number, D::none, "0.6", false, 0.01, 1, "", "NVLS all-reduce: achieved fraction of link bandwidth"},
  {"node.ll_bandwidth_fraction", T::number, D::none, "1", false, 0.01, 1, "", "NCCL low-latency (LL) protocol: share of achievable link bandwidth (1: one protocol, as before)"},
  {"node.bulk_protocol_latency", T::quantity, D::time, "0us", false, 0, 1, "", "NCCL bulk (Simple) protocol: fixed latency per intra-node collective on top of link_latency steps"},
  {"cluster.nics_per_node", T::integer, D::none, "8", false, 1, 64, "", "NICs per server"},
  {"cluster.nic_bandwidth", T::quantity, D::bandwidth, "", true, kMinLinkBandwidth, kMaxLinkBandwidth, "", "per NIC per direction"},
  {"cluster.hop_latency", T::quantity, D::time, "", true, 0, 1, "", "latency per switch hop"},
  {"cluster.nic_latency", T::quantity, D::time, "0us", false, 0, 1, "", "software + NIC latency per inter-node message, on top of hops"},
  {"cluster.hops", T::integer, D::none, "3", false, 1, 16, "", "switch hops between two servers"},
  {"cluster.topology", T::choice, D::none, "fat_tree", false, 0, 0, "fat_tree|rail_optimized", "inter-node network"},
  // 1024: 256x the 4:1 of the most tapered fat trees in use.
  {"cluster.oversubscription", T::number, D::none, "1", false, 1, 1024, "", "1 = full bisection"},
  {"cluster.achievable_fraction", T::number, D::none, "0.8", false, 0.01, 1, "", "measured busbw / NIC line rate"},
  // 2^20: as many servers as the largest cluster a scenario takes has devices.
  {"cluster.servers_per_leaf", T::integer, D::none, "0", false, 0, 1048576, "", "servers under one leaf (rail) switch group; groups spanning more cross the spine and pay oversubscription (0: every group does)"},
  {"cluster.host_link_bandwidth", T::quantity, D::bandwidth, "0B/s", false, 0, kMaxLinkBandwidth, "", "device <-> host (PCIe), for offload"},
  // 1e12: 700x the 1.4e9 measured (DeepSpeed pull 735), far above any host's memory bandwidth / 28 B.
  {"cluster.host_cpu_adam_params_per_s", T::number, D::none, "0", false, 0, 1e12, "", "parameters per second one server's CPUs update with DeepSpeed's CPU-Adam, shared by its devices (plan.offload_optimizer; 0: unknown)"},
  // Issue 19: defaults of the scenario's variability.* keys of the same names (the scenario's
  // own keys override them) and the fleet's failure rate, each with its source in the file.
  {"variability.device_speed_cv", T::number, D::none, "0", false, 0, 1, "", "coefficient of variation of a device's sustained speed (scenario default)"},
  {"variability.step_jitter_cv", T::number, D::none, "0", false, 0, 1, "", "coefficient of variation of a device's speed from step to step (scenario default; run --samples draws it)"},
  {"variability.slow_card_rate", T::number, D::none, "0", false, 0, 1, "", "probability that a device is a slow card (scenario default)"},
  {"variability.slow_card_speed", T::number, D::none, "0.6667", false, 0.01, 1, "", "speed factor of a slow card (scenario default)"},
  {"reliability.failure_rate", T::number, D::none, "0", false, 0, 1, "", "job interruptions per device-hour (0: unknown, no failures priced); Llama 3: 419 in 54 days on 16,384 H100 = 1.97e-5"},
};

const std::vector<KeySpec> kScenarioKeys = {
  {"name", T::string, D::none, "", false, 0, 0, "", "scenario name (default: file name)"},
  {"description", T::string, D::none, "", false, 0, 0, "", "free text"},
  {"model", T::string, D::none, "", true, 0, 0, "", "model file (models/*.yaml or a HF config.json)"},
  {"hardware", T::string, D::none, "", true, 0, 0, "", "hardware file (hardware/*.yaml)"},
  // 2^20: 10x the largest clusters built (~100k GPUs), 64x LLaMA-3 405B's 16384.
  {"num_devices", T::integer, D::none, "", true, 1, 1048576, "", "devices in the job"},
  {"data.sample_load_time", T::quantity, D::time, "0s", false, 0, 3600, "", "host time to read and prepare one sequence (0: free)"},
  {"data.loader_workers", T::integer, D::none, "2", false, 0, 1024, "", "background data-loader workers per rank (0: load inside the training loop)"},
  {"plan.tensor_model_parallel_size", T::integer, D::none, "1", false, 1, 1024, "", "TP"},
  {"plan.pipeline_model_parallel_size", T::integer, D::none, "1", false, 1, 4096, "", "PP"},
  {"plan.virtual_pipeline_model_parallel_size", T::integer, D::none, "1", false, 1, 1024, "", "model chunks per stage (interleaved; not given: one layer per chunk)"},
  {"plan.microbatch_group_size_per_vp_stage", T::integer, D::none, "0", false, 0, 1e6, "", "interleaved: micro-batches a stage runs through one chunk before the next (Megatron-Core --microbatch-group-size-per-virtual-pipeline-stage; 0: the pipeline size)"},
  {"plan.context_parallel_size", T::integer, D::none, "1", false, 1, 1024, "", "CP"},
  {"plan.expert_model_parallel_size", T::integer, D::none, "1", false, 1, 4096, "", "EP"},
  {"plan.sequence_parallel", T::boolean, D::none, "false", false, 0, 0, "", "Megatron sequence parallelism (needs TP > 1)"},
  {"plan.micro_batch_size", T::integer, D::none, "1", false, 1, 1e6, "", "sequences per micro-batch"},
  {"plan.global_batch_size", T::integer, D::none, "", true, 1, 1e9, "", "sequences per step"},
  {"plan.seq_length", T::integer, D::none, "", true, 1, 1e8, "", "tokens per sequence"},
  {"plan.recompute_granularity", T::choice, D::none, "none", false, 0, 0, "none|selective|full", "activation recomputation"},
  {"plan.recompute_method", T::choice, D::none, "uniform", false, 0, 0, "uniform|block", "full recompute: how layers are chosen"},
  {"plan.recompute_num_layers", T::integer, D::none, "0", false, 0, kMaxLayers, "", "full recompute: layers per stage (0: all)"},
  {"plan.use_distributed_optimizer", T::boolean, D::none, "false", false, 0, 0, "", "Megatron: shard optimizer state over DP"},
  {"plan.framework", T::choice, D::none, "megatron-core", false, 0, 0, "megatron-core|megatron-lm|deepspeed|fsdp|mindspeed|deepspeed-2021|bigscience-megatron-deepspeed|nemo|mindformers|bmtrain|llm-foundry|llm-foundry-2022", "training framework whose mechanisms are priced (trainsim/framework)"},
  {"plan.zero_stage", T::integer, D::none, "0", false, 0, 3, "", "DeepSpeed ZeRO stage"},
  // Issue 14, optimizer offload: DeepSpeed's offload_optimizer.device (cpu; nvme is not priced),
  // Megatron-Core's --optimizer-cpu-offload. false / true: the key's earlier spelling.
  {"plan.offload_optimizer", T::choice, D::none, "none", false, 0, 0, "none|cpu|false|true", "ZeRO-Offload: fp32 master parameters, Adam moments and step on the host CPU (cpu)"},
  // Issue 14: PyTorch FSDP's MixedPrecision by Composer / llm-foundry's names (fsdp_config.mixed_precision).
  {"plan.fsdp_mixed_precision", T::choice, D::none, "default", false, 0, 0, "default|pure|full", "FSDP: default reduces gradients in fp32, pure in the compute dtype, full gathers and reduces in fp32"},
  {"plan.reuse_fp32_param", T::boolean, D::none, "false", false, 0, 0, "", "MindSpeed --reuse-fp32-param: fp32 master copy rebuilt from the bf16 parameters"},
  {"plan.accumulate_allreduce_grads_in_fp32", T::boolean, D::none, "false", false, 0, 0, "", "Megatron-family frameworks, fp16: the gradient buffer and its DP reduction in fp32 (--accumulate-allreduce-grads-in-fp32; bf16 always does); false: fp16, 2 bytes a parameter"},
  {"plan.gradient_accumulation_fusion", T::boolean, D::none, "true", false, 0, 0, "", "Megatron-family frameworks: each weight-gradient GEMM accumulates into the fp32 gradient buffer (false: --no-gradient-accumulation-fusion, a separate add kernel per weight); no effect on other frameworks"},
  {"plan.vocab_parallel", T::choice, D::none, "none", false, 0, 0, "none|vocab-1|vocab-2|interlaced", "Vocabulary Parallelism on 1F1B (arXiv 2411.05288): the embedding and the output layer split over the pipeline stages by vocabulary; vocab-1 two all-reduce barriers (--disable-backward-fusion), vocab-2 one (the fork's default), interlaced the interlaced pipeline (synchronous, 1.5p in flight)"},
  {"plan.torch_compile", T::boolean, D::none, "false", false, 0, 0, "", "torchtitan training.compile: each transformer block compiled with torch.compile, fusing the model's eager norm, rotary and activation ops (framework fsdp)"},
  {"plan.schedule", T::choice, D::none, "1f1b", false, 0, 0, schedule_names(), "pipeline schedule (zb-2p: the zero-bubble reference's heuristic under a 2p memory limit)"},
  {"plan.precision", T::choice, D::none, "bf16", false, 0, 0, "bf16|fp16|fp8", "compute precision"},
  {"plan.use_flash_attn", T::boolean, D::none, "true", false, 0, 0, "", "fused attention (no s*s scores kept)"},
  {"plan.attention_kernel", T::choice, D::none, "auto", false, 0, 0, "auto|flash1|flash2|flash3|cudnn|eager", "attention kernel priced: auto = device.attention_efficiency; eager = use_flash_attn false"},
  {"plan.overlap_grad_reduce", T::boolean, D::none, "true", false, 0, 0, "", "DP reduction overlaps backward"},
  {"plan.overlap_param_gather", T::boolean, D::none, "true", false, 0, 0, "", "parameter all-gather overlaps forward"},
  {"plan.tp_comm_overlap", T::boolean, D::none, "false", false, 0, 0, "", "TP collectives hidden under GEMMs: whole (Transformer Engine's userbuffers, MindSpeed's CoC), or on fsdp cut into TP pieces beside their matmuls (torchtitan's async TP; backward reduce-scatters exposed)"},
  {"plan.overlap_moe_expert_parallel_comm", T::boolean, D::none, "false", false, 0, 0, "",
   "EP all-to-alls hidden under another micro-batch's compute (Megatron-Core combined 1F1B)"},
  {"plan.overlap_p2p_comm", T::boolean, D::none, "true", false, 0, 0, "", "Megatron's interleaved schedule: pipeline sends and receives overlap the next pass (false: both sides wait for each exchange, --no-overlap-p2p-communication); other schedules always wait"},
  {"plan.collective_algorithm", T::choice, D::none, "auto", false, 0, 0, "auto|ring|tree|hierarchical|full_mesh", "force a collective algorithm (auto: by size and group shape)"},
  {"plan.collective_pipeline_tiers", T::boolean, D::none, "false", false, 0, 0, "", "HCCL: pipeline the intra- and inter-server phases at every size (false: HCCL's own choice, which pipelines from 2 MiB a rank)"},
  {"plan.collective_split_intra", T::boolean, D::none, "false", false, 0, 0, "", "HCCL: split an intra-server all-reduce between HCCS and RoCE"},
  {"plan.grad_bucket_size", T::quantity, D::bytes, "0B", false, 0, kMaxBytes, "", "DP gradient bucket; 0 = Megatron's max(40M, 1M x DP) parameters"},
  {"plan.layers_per_stage", T::int_list, D::none, "", false, 1, kMaxLayers, "", "explicit pipeline split, one entry per stage"},
  {"plan.decoder_first_pipeline_num_layers", T::integer, D::none, "0", false, 0, kMaxLayers, "", "Megatron: layers of the first pipeline stage, split over its chunks (0: even split)"},
  {"plan.decoder_last_pipeline_num_layers", T::integer, D::none, "0", false, 0, kMaxLayers, "", "Megatron: layers of the last pipeline stage, split over its chunks (0: even split)"},
  {"plan.account_for_embedding_in_pipeline_split", T::boolean, D::none, "false", false, 0, 0, "", "Megatron: the embedding counts as a layer; the first virtual stage builds one fewer"},
  {"plan.account_for_loss_in_pipeline_split", T::boolean, D::none, "false", false, 0, 0, "", "Megatron: the output layer and loss count as a layer; the last virtual stage builds one fewer"},
  {"plan.optimizer_post_validation", T::boolean, D::none, "false", false, 0, 0, "", "zero-bubble paper's optimizer post-validation: no end-of-step sync, the step time is the steady-state period"},
  {"plan.rank_order", T::string, D::none, "tp-cp-ep-dp-pp", false, 0, 0, "", "rank order, fastest-varying first"},
  // Variability (issue 19). Every default leaves the cluster uniform (today's predictions);
  // the docs give the published magnitudes to set. Sinha et al., "Not All GPUs Are Created
  // Equal" (SC'22): 8% (max 22%) average performance variation between GPUs of one SKU on
  // Summit, Vortex, Frontera, Longhorn, Corona, outliers up to 1.5x slower than the median GPU.
  {"variability.slow_devices", T::integer, D::none, "0", false, 0, 1048576, "", "slow cards: a count placed at random by variability.seed at slow_card_speed, or a list of {rank, speed_factor} (rank = stage x devices per stage + index, as run prints)"},
  {"variability.slow_card_speed", T::number, D::none, "0.6667", false, 0.01, 1, "", "speed factor of a slow card placed by count or rate; 1/1.5: Sinha et al. SC'22 outliers 1.5x slower than the median GPU"},
  {"variability.slow_card_rate", T::number, D::none, "0", false, 0, 1, "", "probability that a device is a slow card (0: none; assumption to set, e.g. from your fleet's straggler logs)"},
  {"variability.device_speed_cv", T::number, D::none, "0", false, 0, 1, "", "coefficient of variation of a device's sustained speed, lognormal, fixed per device (assumption to set; Sinha et al. SC'22 measured 8% average variation between GPUs of one SKU)"},
  {"variability.step_jitter_cv", T::number, D::none, "0", false, 0, 1, "", "coefficient of variation of a device's speed from step to step, lognormal (OS noise, clocks; assumption), drawn by run --samples"},
  {"variability.seed", T::integer, D::none, "1", false, 0, 2147483647, "", "seed of the cluster's draws (slow-card placement, speed spread); run --seed overrides"},
  // Long context (issue 17): packed sequences and the context-parallel variant (last, so the
  // "valid:" lists of the plan and data sections keep their order).
  {"data.document_lengths", T::int_list, D::none, "", false, 1, 1e8, "", "packed sequences: document lengths in tokens (attention per document, variable-length flash attention; a document longer than seq_length counts as the sequence-long pieces packing cuts it into)"},
  {"data.document_weights", T::int_list, D::none, "", false, 1, 1e9, "", "relative number of documents of each length (default: equal)"},
  {"plan.cp_attention_mask_type", T::choice, D::none, "causal", false, 0, 0, "causal|general", "MindSpeed's --cp-attention-mask-type: general runs each CP ring step over its whole block with the full mask (twice causal attention's work)"},
  {"plan.cp_comm_type", T::choice, D::none, "p2p", false, 0, 0, "p2p|all_gather|a2a|a2a+p2p", "context parallelism (Megatron-Core's words): p2p ring, all_gather of K/V (Llama 3), a2a (DeepSpeed-Ulysses), a2a+p2p (all-to-all inside, ring across); on fsdp (PyTorch's context_parallel) all_gather is its rotate method allgather (torchtitan's default), p2p alltoall"},
  {"plan.hierarchical_context_parallel_sizes", T::int_list, D::none, "", false, 1, 1e6, "", "a2a+p2p: [all-to-all size over consecutive CP ranks, ring size], product = context_parallel_size"},
  // MoE routing as it happens: properties of the run (router, balancing loss, data), not of
  // the architecture, so scenario keys (a what-if is one --set away). The CV of tokens per
  // expert is at most sqrt(E/k - 1) (every token on the same k experts): 256 covers
  // kMaxExperts; the loader checks the model's own bound. Formula: moe_max_load_factor.
  {"moe.expert_load_cv", T::number, D::none, "0", false, 0, 256, "", "coefficient of variation of tokens per expert in a step (0: balanced)"},
  {"moe.expert_capacity_factor", T::number, D::none, "0", false, 0, kMaxExperts, "", "Megatron --moe-expert-capacity-factor: tokens over it x the balanced share drop (0: dropless)"},
  {"moe.token_dispatcher", T::choice, D::none, "alltoall", false, 0, 0, "alltoall|allgather|flex", "Megatron --moe-token-dispatcher-type: alltoall (each token copy sent), allgather (every token all-gathered over EP), flex (DeepEP: each token once per node over RDMA, then per GPU over NVLink)"},
  // DeepSeek-V3's memory savings (issue 18; arXiv 2412.19437 3.2.3, 3.3.3): Megatron-Core's own
  // words where it has them (--recompute-modules, --exp-avg-dtype, --exp-avg-sq-dtype). Defaults
  // keep Megatron's defaults and the memory priced before.
  {"plan.recompute_modules", T::string, D::none, "", false, 0, 0, "", "recompute_granularity selective: Megatron-Core --recompute-modules, comma-separated from core_attn, layernorm, mla_up_proj, moe_act (empty: Megatron's default core_attn)"},
  {"plan.fp8_activation_cache", T::choice, D::none, "none", false, 0, 0, "none|linear_inputs|deepseek_v3", "FP8 plans: inputs of FP8 Linears kept for backward in FP8 with 1x128 fp32 scales (linear_inputs; what an FP8 plan takes on a framework whose Linears are Transformer Engine's, none there too); deepseek_v3 adds the report's exceptions (attention output in E5M6, routed experts' SwiGLU input in FP8)"},
  {"plan.fp8_recipe", T::choice, D::none, "delayed", false, 0, 0, "delayed|tensorwise|blockwise|mxfp8", "FP8 plans: Megatron-Core --fp8-recipe, how Transformer Engine scales FP8 tensors: delayed (per tensor, amax history), tensorwise (per tensor, current amax), blockwise (1x128 activations, 128x128 weights, DeepSeek-V3), mxfp8 (32-element E8M0 blocks, device.mxfp8)"},
  {"plan.fp8_param_gather", T::boolean, D::none, "false", false, 0, 0, "", "FP8 plans: Megatron-Core --fp8-param-gather, the FP8 GEMM weights kept as FP8 parameters (no 16-bit copy) and all-gathered by the distributed optimizer in FP8 (1 byte a parameter; mxfp8 gathers 16-bit and saves the memory only); on fsdp with zero_stage 3 and fp8_recipe tensorwise, torchao's enable_fsdp_float8_all_gather (each unit gathered and held in FP8)"},
  {"plan.first_last_layers_bf16", T::boolean, D::none, "false", false, 0, 0, "", "FP8 plans: Megatron-Core --first-last-layers-bf16, the first and last transformer layers' Linears in BF16 (not with fp8_recipe delayed)"},
  {"plan.num_layers_at_start_in_bf16", T::integer, D::none, "1", false, 0, kMaxLayers, "", "first_last_layers_bf16: layers at the start of the model in BF16 (at most layers per pipeline stage)"},
  {"plan.num_layers_at_end_in_bf16", T::integer, D::none, "1", false, 0, kMaxLayers, "", "first_last_layers_bf16: layers at the end of the model in BF16 (at most layers per pipeline stage)"},
  {"plan.exp_avg_dtype", T::choice, D::none, "fp32", false, 0, 0, "fp32|bf16|fp16", "Megatron-Core --exp-avg-dtype: AdamW first moment (DeepSeek-V3: bf16)"},
  {"plan.exp_avg_sq_dtype", T::choice, D::none, "fp32", false, 0, 0, "fp32|bf16|fp16", "Megatron-Core --exp-avg-sq-dtype: AdamW second moment (DeepSeek-V3: bf16)"},
  {"plan.ema_parameters", T::choice, D::none, "none", false, 0, 0, "none|device|host", "fp32 EMA of the parameters, sharded as the optimizer state: on the device, or in host memory (DeepSeek-V3 3.2.3)"},
  // Goodput at scale (issue 19; explore/goodput.hpp): what failures, restarts and checkpoints
  // cost a job of this size. The failure rate defaults to the hardware file's.
  {"goodput.failure_rate", T::number, D::none, "", false, 0, 1, "", "job interruptions per device-hour (default: the hardware's reliability.failure_rate)"},
  {"goodput.restart_time", T::quantity, D::time, "660s", false, 0, 864000, "", "from a failure to training again (reschedule, load the checkpoint); assumption near the median auto-retry interval of 11 min on a 504-GPU B200 cluster (SKT/Upstage/Lablup/NVIDIA Korea/VAST Data report)"},
  {"goodput.storage_bandwidth", T::quantity, D::bandwidth, "2TB/s", false, 1e6, 1e15, "", "aggregate checkpoint write bandwidth of the storage; Llama 3 (Tectonic): 2 TB/s sustained, 7 TB/s peak"},
  {"goodput.checkpoint", T::choice, D::none, "framework", false, 0, 0, "framework|sync|async", "how checkpoints are written: framework (async where plan.framework saves so), sync (training waits for the write), async (waits for the copy to host memory)"},
  {"goodput.checkpoint_interval", T::quantity, D::time, "0s", false, 0, 8640000, "", "training time between checkpoints (0: Young's interval sqrt(2 x checkpoint cost x MTBF), which maximises goodput)"},
};
// clang-format on

// Names directly under `prefix` (keys and sections), in table order.
std::vector<std::string> names_under(const std::vector<KeySpec>& schema, const std::string& prefix) {
  std::vector<std::string> names;
  const std::string head = prefix.empty() ? "" : prefix + ".";
  for (const auto& spec : schema) {
    const std::string path = spec.path;
    if (path.compare(0, head.size(), head) != 0) continue;
    const std::string rest = path.substr(head.size());
    const std::string name = rest.substr(0, rest.find('.'));
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  }
  return names;
}

std::string join(const std::vector<std::string>& parts, const std::string& sep) {
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : sep) + p;
  return out;
}

std::string number_text(double x) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.10g", x);
  return buffer;
}

std::string range_text(const KeySpec& spec) {
  auto fmt = [&](double x) { return spec.type == T::quantity ? format_quantity(x, spec.dim) : number_text(x); };
  const std::string kind = spec.type == T::integer || spec.type == T::int_list ? "integer" : dimension_name(spec.dim);
  return kind + " in [" + fmt(spec.min) + ", " + fmt(spec.max) + "]";
}

// Base-10 integer, the whole text. A value past the long long range is clamped to it (and then
// fails the key's range check, which is within int), never wrapped.
bool parse_integer(const std::string& text, double& out) {
  if (text.empty()) return false;
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (end == text.c_str() || *end != '\0') return false;
  out = static_cast<double>(v);  // on ERANGE v is LLONG_MIN / LLONG_MAX
  return true;
}

bool parse_number(const std::string& text, double& out) {
  if (text.empty()) return false;
  char* end = nullptr;
  out = std::strtod(text.c_str(), &end);
  return end != text.c_str() && *end == '\0' && std::isfinite(out);
}

// Parses one scalar `text` for `spec` into `value`; returns the problem or "".
std::string parse_scalar(const KeySpec& spec, const std::string& text, Value& value, std::string& valid) {
  value.text = text;
  // Every string the simulator keeps ends up in reports and JSON, which must be UTF-8.
  std::size_t bad = 0;
  if (!is_valid_utf8(text, &bad)) {
    valid = "UTF-8 text";
    return "'" + echo(text) + "' is not valid UTF-8 (byte " + std::to_string(bad) + ")";
  }
  // Nor control bytes (NUL, terminal escapes); tab and line breaks are text.
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7F) {
      valid = "text without control characters";
      return "'" + echo(text) + "' holds a control character (byte " + std::to_string(i) + ")";
    }
  }
  switch (spec.type) {
    case T::string:
      return "";
    case T::boolean:
      if (text == "true") {
        value.number = 1;
        return "";
      }
      if (text == "false") {
        value.number = 0;
        return "";
      }
      valid = "true, false";
      return "expected true or false, got '" + echo(text) + "'";
    case T::choice: {
      const auto choices = split(spec.choices, '|');
      if (std::find(choices.begin(), choices.end(), text) != choices.end()) return "";
      valid = join(choices, ", ");
      const std::string near = closest_key(text, choices);
      return "'" + echo(text) + "' is not a valid value" + (near.empty() ? "" : ", did you mean '" + near + "'?");
    }
    case T::integer:
    case T::int_list:
      if (!parse_integer(text, value.number)) {
        valid = range_text(spec);
        return "expected an integer, got '" + echo(text) + "'";
      }
      break;
    case T::number:
      if (!parse_number(text, value.number)) {
        valid = range_text(spec);
        return "expected a finite number, got '" + echo(text) + "'";
      }
      break;
    case T::quantity: {
      std::string error;
      if (!parse_quantity(text, spec.dim, value.number, error)) {
        valid = range_text(spec);
        return error;
      }
      break;
    }
  }
  if (value.number < spec.min || value.number > spec.max) {
    valid = range_text(spec);
    return echo(text) + " is out of range";
  }
  return "";
}

struct Walker {
  const std::vector<KeySpec>& schema;
  const ValidateOptions& options;
  std::vector<Diagnostic>& diagnostics;
  Validated out;
  std::set<std::string> section_names;
  std::set<std::string> seen;      // paths written in the file, valid or not (duplicates)
  std::set<std::string> reported;  // paths with a problem already (not "missing" as well)

  const KeySpec* find(const std::string& path) const {
    for (const auto& spec : schema)
      if (path == spec.path) return &spec;
    return nullptr;
  }

  SourceLocation where(const YAML::Node& node, const std::string& path) const {
    if (options.overridden.count(path)) return SourceLocation{"--set", 0, 0};
    return location_of(node, options.file);
  }

  std::vector<std::string> children(const std::string& prefix) const { return names_under(schema, prefix); }

  void problem(SourceLocation where, const std::string& path, std::string what, std::string valid = "") {
    reported.insert(path);
    diagnostics.push_back(Diagnostic{std::move(where), path, std::move(what), std::move(valid)});
  }

  void walk(const YAML::Node& map, const std::string& prefix) {
    for (auto it = map.begin(); it != map.end(); ++it) {
      // Copies: yaml-cpp's iterator hands out references to a temporary pair.
      const YAML::Node key_node = it->first;
      const YAML::Node node = it->second;
      if (!key_node.IsScalar()) {  // "? [a, b]" or "{a: 1}: 2"
        problem(where(key_node, prefix), prefix, "a key must be a plain name, not a list or mapping",
                join(children(prefix), ", "));
        continue;
      }
      const std::string key = key_node.Scalar();
      const std::string path = prefix.empty() ? key : prefix + "." + key;
      if (section_names.count(path)) {
        out.sections[path] = where(key_node, path);
        if (!node.IsMap()) {
          problem(where(node, path), path, "expected a section (a mapping of keys)", join(children(path), ", "));
        } else {
          walk(node, path);
        }
        continue;
      }
      const KeySpec* spec = find(path);
      if (!seen.insert(path).second) {
        problem(where(key_node, path), path, "duplicate key (the first value would be silently replaced)");
        continue;
      }
      if (!spec) {
        if (options.ignore_unknown) continue;
        const auto names = children(prefix);
        const std::string near = closest_key(key, names);
        if (!near.empty()) {
          problem(where(key_node, path), path, "unknown key '" + echo(key) + "', did you mean '" + near + "'?",
                  join(names, ", "));
        } else {
          problem(where(key_node, path), path, "unknown key '" + echo(key) + "'", join(names, ", "));
        }
        continue;
      }
      if (node.IsNull()) {
        // JSON null: the HF config leaves an optional key unset; a required one is missing.
        if (options.ignore_unknown && !spec->required) continue;
        // At the key: yaml-cpp marks an empty value at the next token, often the next line.
        problem(where(key_node, path), path, "has no value (null)", range_or_choices(*spec));
        continue;
      }
      check(*spec, node, path);
    }
  }

  std::string range_or_choices(const KeySpec& spec) const {
    if (spec.type == T::choice) return join(split(spec.choices, '|'), ", ");
    if (spec.type == T::boolean) return "true, false";
    if (spec.type == T::string) return "a string";
    if (spec.type == T::quantity) return std::string("a value with a unit, e.g. ") + dimension_example(spec.dim);
    return range_text(spec);
  }

  void check(const KeySpec& spec, const YAML::Node& node, const std::string& path) {
    Value value;
    value.where = where(node, path);
    std::string valid;
    if (spec.type == T::int_list) {
      if (!node.IsSequence()) {
        problem(value.where, path, "expected a list of integers, e.g. [10, 11, 11]");
        return;
      }
      bool ok = true;
      for (const auto& item : node) {
        Value element;
        if (!item.IsScalar()) {
          problem(where(item, path), path, "expected an integer");
          ok = false;
          continue;
        }
        const std::string why = parse_scalar(spec, item.Scalar(), element, valid);
        if (!why.empty()) {
          problem(where(item, path), path, why, valid);
          ok = false;
          continue;
        }
        value.list.push_back(static_cast<int>(element.number));
      }
      if (ok) out.values[path] = value;
      return;
    }
    if (!node.IsScalar()) {
      problem(value.where, path, std::string("expected a single value, not a ") + (node.IsMap() ? "mapping" : "list"),
              range_or_choices(spec));
      return;
    }
    const std::string why = parse_scalar(spec, node.Scalar(), value, valid);
    if (!why.empty()) {
      problem(value.where, path, why, valid);
      return;
    }
    out.values[path] = value;
  }

  void finish(const YAML::Node& root) {
    for (const auto& spec : schema) {
      // Written and valid, or written and already reported. (A JSON null is neither: the key
      // takes its default.)
      if (out.has(spec.path) || reported.count(spec.path)) continue;
      const std::string path = spec.path;
      if (spec.required) {
        const auto dot = path.rfind('.');
        const std::string parent = dot == std::string::npos ? "" : path.substr(0, dot);
        SourceLocation at = out.sections.count(parent) ? out.sections[parent] : location_of(root, options.file);
        problem(at, path, "missing required key", range_or_choices(spec));
        continue;
      }
      if (std::string(spec.default_text).empty()) continue;
      Value value;
      std::string valid;
      parse_scalar(spec, spec.default_text, value, valid);  // defaults are checked by a test
      out.values[path] = value;
    }
  }
};

}  // namespace

std::string scalar_value_problem(FileKind kind, const std::string& path, const std::string& text, std::string& valid) {
  for (const auto& spec : key_schema(kind)) {
    if (path != spec.path) continue;
    if (spec.type == ValueType::int_list) return "";
    Value value;
    return parse_scalar(spec, text, value, valid);
  }
  return "";
}

const std::vector<KeySpec>& key_schema(FileKind kind) {
  switch (kind) {
    case FileKind::model:
      return kModelKeys;
    case FileKind::hardware:
      return kHardwareKeys;
    case FileKind::scenario:
      return kScenarioKeys;
  }
  return kModelKeys;
}

std::string describe_schema(FileKind kind, const std::string& prefix) {
  std::vector<std::array<std::string, 5>> rows;
  for (const auto& spec : key_schema(kind)) {
    if (std::string_view(spec.path).substr(0, prefix.size()) != prefix) continue;
    std::string type;
    switch (spec.type) {
      case T::integer:
        type = "integer";
        break;
      case T::number:
        type = "number";
        break;
      case T::boolean:
        type = "boolean";
        break;
      case T::string:
        type = "string";
        break;
      case T::choice:
        type = "choice";
        break;
      case T::quantity:
        type = dimension_name(spec.dim);
        break;
      case T::int_list:
        type = "integer list";
        break;
    }
    std::string valid;
    if (spec.type == T::choice)
      valid = join(split(spec.choices, '|'), ", ");
    else if (spec.type == T::integer || spec.type == T::number || spec.type == T::quantity || spec.type == T::int_list)
      valid = range_text(spec);
    const std::string deflt = spec.required                            ? "(required)"
                              : std::string(spec.default_text).empty() ? "(unset)"
                                                                       : spec.default_text;
    rows.push_back({spec.path, type, deflt, valid, spec.doc});
  }
  if (rows.empty()) return "";
  rows.insert(rows.begin(), {"key", "type", "default", "valid", "meaning"});
  std::array<std::size_t, 4> width{};
  for (const auto& row : rows)
    for (std::size_t c = 0; c < width.size(); ++c) width[c] = std::max(width[c], row[c].size());
  std::string out;
  for (const auto& row : rows) {
    for (std::size_t c = 0; c < width.size(); ++c) out += row[c] + std::string(width[c] - row[c].size() + 2, ' ');
    out += row[4] + "\n";
  }
  return out;
}

int edit_distance(const std::string& a, const std::string& b) {
  std::vector<int> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = static_cast<int>(j);
  for (size_t i = 1; i <= a.size(); ++i) {
    int diagonal = row[0];
    row[0] = static_cast<int>(i);
    for (size_t j = 1; j <= b.size(); ++j) {
      const int up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

std::string closest_key(const std::string& key, const std::vector<std::string>& candidates) {
  // Close enough: at most a third of the longer name changed (and always 2 edits).
  std::string best;
  int best_distance = 1 << 30;
  for (const auto& c : candidates) {
    const int d = edit_distance(key, c);
    const int limit = std::max(2, static_cast<int>(std::max(key.size(), c.size())) / 3);
    if (d <= limit && d < best_distance) {
      best = c;
      best_distance = d;
    }
  }
  return best;
}

std::vector<std::string> keys_under(FileKind kind, const std::string& section) {
  return names_under(key_schema(kind), section);
}

SourceLocation location_of(const YAML::Node& node, const std::string& file) {
  const YAML::Mark mark = node.Mark();
  if (mark.is_null()) return SourceLocation{file, 0, 0};
  return SourceLocation{file, mark.line + 1, mark.column + 1};  // yaml-cpp marks are 0-based
}

Validated validate_tree(const YAML::Node& root, FileKind kind, const ValidateOptions& options,
                        std::vector<Diagnostic>& diagnostics) {
  Walker walker{key_schema(kind), options, diagnostics, {}, {}, {}, {}};
  for (const auto& spec : walker.schema) {
    std::string path = spec.path;
    for (auto dot = path.rfind('.'); dot != std::string::npos; dot = path.rfind('.')) {
      path = path.substr(0, dot);
      walker.section_names.insert(path);
    }
  }
  if (!root.IsMap()) {
    std::vector<std::string> required;
    for (const auto& spec : walker.schema)
      if (spec.required) required.push_back(spec.path);
    const std::string valid = "'key: value' lines with at least " + join(required, ", ");
    SourceLocation at = location_of(root, options.file);
    if (at.line == 0) at = SourceLocation{options.file, 1, 1};
    const std::string what = root.IsNull()      ? "the file has no keys (it is empty or only comments)"
                             : root.IsSequence() ? "expected a mapping of keys at the top level, not a list"
                                                 : "expected a mapping of keys at the top level, not a single value";
    diagnostics.push_back(Diagnostic{at, "", what, valid});
    return {};
  }
  walker.walk(root, "");
  walker.finish(root);
  return walker.out;
}

}  // namespace trainsim
