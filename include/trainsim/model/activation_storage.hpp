#pragma once
// What a layer keeps for backward and what its backward runs again, under the plan's selective
// recompute modules (plan.recompute_modules) and FP8 activation cache (plan.fp8_activation_cache).
// Added by issue 18 for DeepSeek-V3's "Extremely Memory Saving with Minimal Overhead" (arXiv
// 2412.19437, 3.2.3: RMSNorm and MLA up-projections recomputed in backward) and low-precision
// activations (3.3.3: FP8 inputs of Linears, the attention output in E5M6, the MoE SwiGLU input
// cached in FP8 with its output recomputed). With the defaults (no modules beyond Megatron's
// core_attn, no FP8 cache) every op keeps its Korthikanti bytes (workload.hpp
// layer_activation_bytes), to the last bit, except the flex (DeepEP) dispatcher's unpermute,
// which keeps the routing probabilities instead of the expert outputs (activation_storage.cpp).
#include "trainsim/model/model_spec.hpp"
#include "trainsim/model/workload.hpp"
#include "trainsim/plan/parallel_plan.hpp"

namespace trainsim {

// Bytes per element of a cached FP8 Linear input: 1 byte and one fp32 scaling factor per 1x128
// tile (report 3.3.2, fine-grained quantization: "per-token-group" 1x128 tiles of activations);
// of the E5M6 format (12 bits) the report keeps the Linear after attention's input in, with the
// same tiles (3.3.3: its scales are powers of 2, kept here as fp32 like the others).
constexpr double kFp8CachedBytes = 1.0 + 4.0 / 128.0;
constexpr double kE5m6CachedBytes = 1.5 + 4.0 / 128.0;

// Bytes `op` keeps for backward: an op of a transformer layer, of the embedding, or of the head
// with its MTP modules' copies ("mtp<i>_<name>"). Not for full recompute (a fully recomputed layer
// keeps its input: kept_layer_activation_bytes).
double kept_activation_bytes(const Op& op, const ModelSpec& model, const ParallelPlan& plan);
// Sum of kept_activation_bytes over the ops (the embedding and the head, whatever the recompute).
double kept_ops_activation_bytes(const LayerWorkload& layer, const ModelSpec& model, const ParallelPlan& plan);
// A transformer layer: full recompute keeps the layer input (layer_input_bytes); otherwise the
// sum over its ops.
double kept_layer_activation_bytes(const LayerWorkload& layer, const ModelSpec& model, const ParallelPlan& plan);
// What a layer's deferred weight gradient (the zero-bubble schedules' W pass, DualPipe's) keeps
// from its B pass until it runs: each Linear's input and output gradient (the zero-bubble fork's
// WeightGradStore.put stores the pair, megatron/core/tensor_parallel/layers.py; its runtime.py
// models it as 32 h bytes a token of the 34 h + 5 a s a GPT layer keeps). 16-bit elements.
double weight_grad_kept_bytes(const LayerWorkload& layer, const ModelSpec& model, const ParallelPlan& plan);
// Whether selective recompute runs `op`'s forward again before its backward (core_attn: the ops
// flagged dropped_by_selective_recompute; layernorm: the input and pre-MLP norms; mla_up_proj:
// the q / kv norms, the up projections and MLA's rope; moe_act: the routed experts' activation).
bool recomputed_in_backward(const Op& op, const ParallelPlan& plan);
// Whether the plan's selective recompute is torchtitan's per-op policy (the framework entry's
// selective_recompute torchtitan_op under recompute_granularity selective): workload.cpp marks
// the blocks' ops (Op::op_sac), and a block keeps its input beside what the policy saves.
bool per_op_checkpointing(const ParallelPlan& plan);
// The share of `op`'s forward the backward runs again: torchtitan's per-op policy's share where
// it marked the op (Op::op_sac), else 1 or 0 by recomputed_in_backward.
double recomputed_share(const Op& op, const ParallelPlan& plan);
// Matmul FLOPs per token of one MLA layer that the recompute modules run again (HFU, not MFU):
// mla_up_proj's q and kv up projections, 2 (q_lora_rank x heads x qk_head_dim + kv_lora_rank x
// heads x (qk_nope_head_dim + v_head_dim)). 0 without mla_up_proj or MLA.
double recompute_module_flops_per_token(const ModelSpec& model, const ParallelPlan& plan);

}  // namespace trainsim
