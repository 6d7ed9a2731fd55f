// Kept activations and recomputed ops under selective recompute modules and FP8 activation
// caching (trainsim/model/activation_storage.hpp has the sources).
//
// Which op keeps what (workload.cpp's Korthikanti accounting: each op carries the tensors its
// backward needs; a tensor two ops read is carried by one of them):
//  - layernorm (Megatron-Core: "recompute the input_layernorm and pre_mlp_layernorm", output-
//    discarding): the norm output is dropped after its consumers ran and rebuilt from the norm's
//    kept input. Its consumers (q_down / qkv, the router, the MLP's and shared experts' first
//    Linears) then keep nothing of it; the router still keeps its fp32 probabilities. DeepSeek-V3
//    3.2.3: "recompute all RMSNorm operations ... eliminating the need to persistently store their
//    output activations": the Linears after them keep no copy either, FP8 or not.
//  - mla_up_proj (Megatron-Core: "the MLA up projection and RoPE applying parts", the q and kv
//    norms fused into the up projections): q_up and kv_up keep nothing, attention keeps its
//    log-sum-exp and no Q, K, V; the compressed latents stay with the q / kv norms (their inputs)
//    and the shared rope key (kv_down's 64 rope columns, 2 x tokens x rope bytes) is kept as an
//    input of the recomputed region.
//  - moe_act (Megatron-Core: "recompute the MoE MLP activation function", routed experts only;
//    DeepSeek-V3 3.3.3: "cache the inputs of the SwiGLU operator and recompute its output"): the
//    expert down projection keeps nothing, the activation its input.
//  - the flex dispatcher (DeepEP): the routing probabilities multiply the expert activation's
//    output (Megatron-Core TEGroupedMLP activation_func_with_probs, fed the permuted probs by
//    every dispatcher including MoEFlexTokenDispatcher; DeepEP's combine gives no gradient for its
//    weights), so the unpermute is a plain sum and keeps no expert outputs (2 x copies x h); the
//    fp32 probability of each copy is kept for the activation's backward (4 bytes a copy). The
//    alltoall and allgather dispatchers keep workload.cpp's accounting (the probabilities at the
//    unpermute; the calibrated B200 rows' peak memory is fitted with it, and whether their Megatron
//    applied them in the experts is not checked here).
//  - fp8_activation_cache: every FP8 Linear's kept input at kFp8CachedBytes per element instead
//    of 2 (DeepSeek-V3 3.3: the embedding, the output head and the MoE gating stay in BF16, so the
//    router and the LM head keep theirs); deepseek_v3 keeps the attention output (out_proj's input,
//    attention's backward reads it too) in E5M6 and the routed experts' SwiGLU input in FP8.
#include "trainsim/model/activation_storage.hpp"

#include <algorithm>
#include <string_view>

#include "trainsim/framework/framework.hpp"

namespace trainsim {

namespace {

constexpr double kHalf = 2.0;
constexpr double kFp32 = 4.0;

// An MTP module's copy of a layer op is named "mtp<i>_<name>" (workload.cpp add_mtp_modules).
// A view, not a copy: the memory estimate asks this of every op of every plan a search screens.
std::string_view base_name(const std::string& full) {
  const std::string_view name = full;
  if (name.rfind("mtp", 0) != 0) return name;
  std::size_t i = 3;
  while (i < name.size() && name[i] >= '0' && name[i] <= '9') ++i;
  return i > 3 && i < name.size() && name[i] == '_' ? name.substr(i + 1) : name;
}

bool selective(const ParallelPlan& plan) { return plan.recompute_granularity == RecomputeGranularity::selective; }

// Tokens of one micro-batch on this device inside a TP region (b x s / CP).
double local_tokens(const ParallelPlan& plan) {
  return static_cast<double>(plan.micro_batch_size) * plan.seq_length / std::max(1, plan.context_parallel_size);
}

// The Q, K, V an MLA layer's attention keeps (workload.cpp qkv_keep) and the rope key kept in
// their place under mla_up_proj.
double mla_qkv_bytes(const ModelSpec& m, const ParallelPlan& plan) {
  const double qk = static_cast<double>(m.qk_nope_head_dim + m.qk_rope_head_dim);
  const double heads = static_cast<double>(m.num_attention_heads) / std::max(1, plan.tensor_model_parallel_size);
  return kHalf * local_tokens(plan) * heads * (2.0 * qk + static_cast<double>(m.v_head_dim));
}
double mla_rope_key_bytes(const ModelSpec& m, const ParallelPlan& plan) {
  return kHalf * local_tokens(plan) * static_cast<double>(m.qk_rope_head_dim);
}

// Consumers of the input / pre-MLP norm output (the tensor layernorm recompute drops).
bool reads_layer_norm_output(std::string_view name) {
  return name == "q_down_proj" || name == "q_proj" || name == "qkv" || name == "mlp_gate_up" || name == "mlp_up" ||
         name == "shared_expert_gate_up";
}

// A Linear running in FP8 (DeepSeek-V3 3.3: all but the embedding, output head and MoE gating;
// first_last_layers_bf16's layers too): the workload marks the others (Op::fp8_exempt).
bool fp8_linear(const Op& op) { return op.op_class == OpClass::gemm && !op.fp8_exempt; }

}  // namespace

double kept_activation_bytes(const Op& op, const ModelSpec& model, const ParallelPlan& plan) {
  // torchtitan's per-op policy (workload.cpp mark_op_sac): the outputs it saves, nothing else.
  if (op.op_sac) return op.op_sac_saved_bytes;
  const RecomputeModules& rm = plan.recompute_modules;
  double bytes = op.activation_bytes;
  // Megatron's defaults (at most core_attn, no FP8 cache, no flex unpermute): no name to look at.
  const bool by_name = (selective(plan) && (rm.layernorm || rm.mla_up_proj || rm.moe_act)) ||
                       (model.is_moe() && model.moe->token_dispatcher == TokenDispatcher::flex) ||
                       (plan.precision == Precision::fp8 && plan.fp8_activation_cache != Fp8ActivationCache::none);
  if (!by_name) return selective(plan) && rm.core_attn && op.dropped_by_selective_recompute ? 0.0 : bytes;
  const std::string_view name = base_name(op.name);
  if (selective(plan)) {
    if (rm.core_attn && op.dropped_by_selective_recompute) return 0.0;
    if (rm.layernorm && reads_layer_norm_output(name)) return 0.0;
    // The router's input is the pre-MLP norm output (2 x m x k); its fp32 probabilities stay.
    if (rm.layernorm && name == "moe_router")
      bytes -= kHalf * static_cast<double>(op.gemm_m) * static_cast<double>(op.gemm_k);
    if (rm.mla_up_proj && model.is_mla()) {
      if (name == "q_up_proj" || name == "kv_up_proj") return 0.0;
      if (name == "attention_core" || name == "attention_scores")
        bytes = bytes - mla_qkv_bytes(model, plan) + mla_rope_key_bytes(model, plan);
    }
    if (rm.moe_act && name == "expert_down") return 0.0;
  }
  if (name == "moe_unpermute" && model.is_moe() && model.moe->token_dispatcher == TokenDispatcher::flex)
    return kFp32 * bytes / (kHalf * static_cast<double>(model.hidden_size));  // copies x 4 bytes
  if (plan.precision != Precision::fp8 || plan.fp8_activation_cache == Fp8ActivationCache::none) return bytes;
  const bool deepseek = plan.fp8_activation_cache == Fp8ActivationCache::deepseek_v3;
  if (deepseek && name == "out_proj") return bytes * kE5m6CachedBytes / kHalf;
  if (fp8_linear(op)) return bytes * kFp8CachedBytes / kHalf;
  if (deepseek && name == "expert_activation") return bytes * kFp8CachedBytes / kHalf;
  return bytes;
}

double kept_ops_activation_bytes(const LayerWorkload& layer, const ModelSpec& model, const ParallelPlan& plan) {
  double sum = 0;
  for (const Op& op : layer.ops) sum += kept_activation_bytes(op, model, plan);
  return sum;
}

double kept_layer_activation_bytes(const LayerWorkload& layer, const ModelSpec& model, const ParallelPlan& plan) {
  if (plan.recompute_granularity == RecomputeGranularity::full) return layer_input_bytes(model, plan);
  // A block checkpointed op by op keeps its input beside the outputs its policy saves.
  return kept_ops_activation_bytes(layer, model, plan) + (per_op_checkpointing(plan) ? layer_input_bytes(model, plan) : 0.0);
}

bool per_op_checkpointing(const ParallelPlan& plan) {
  return selective(plan) &&
         framework_entry(plan.framework).selective_recompute.value == SelectiveRecompute::torchtitan_op;
}

double recomputed_share(const Op& op, const ParallelPlan& plan) {
  if (op.op_sac) return op.op_sac_recompute_share;
  return recomputed_in_backward(op, plan) ? 1.0 : 0.0;
}

bool recomputed_in_backward(const Op& op, const ParallelPlan& plan) {
  if (!selective(plan)) return false;
  const RecomputeModules& rm = plan.recompute_modules;
  if (rm.core_attn && op.dropped_by_selective_recompute) return true;
  if (!rm.layernorm && !rm.mla_up_proj && !rm.moe_act) return false;
  const std::string_view name = base_name(op.name);
  if (rm.layernorm && (name == "input_norm" || name == "post_attention_norm")) return true;
  if (rm.mla_up_proj &&
      (name == "q_norm" || name == "kv_norm" || name == "q_up_proj" || name == "kv_up_proj" || name == "mla_rope_qkv"))
    return true;
  return rm.moe_act && name == "expert_activation";
}

double recompute_module_flops_per_token(const ModelSpec& m, const ParallelPlan& plan) {
  if (!selective(plan) || !plan.recompute_modules.mla_up_proj || !m.is_mla()) return 0.0;
  const double heads = m.num_attention_heads;
  const double qk = static_cast<double>(m.qk_nope_head_dim + m.qk_rope_head_dim);
  const double q_up = m.q_lora_rank > 0 ? 2.0 * static_cast<double>(m.q_lora_rank) * heads * qk : 0.0;
  const double kv_up =
      2.0 * static_cast<double>(m.kv_lora_rank) * heads * static_cast<double>(m.qk_nope_head_dim + m.v_head_dim);
  return q_up + kv_up;
}

double weight_grad_kept_bytes(const LayerWorkload& layer, const ModelSpec& model, const ParallelPlan& plan) {
  const int tp = std::max(1, plan.tensor_model_parallel_size);
  double sum = 0;
  for (const Op& op : layer.ops) {
    if (op.op_class != OpClass::gemm) continue;
    const double m = static_cast<double>(op.gemm_m), n = static_cast<double>(op.gemm_n), k = static_cast<double>(op.gemm_k);
    // A column-parallel Linear reads the hidden states; under sequence parallelism it keeps its
    // local shard and gathers it again when W runs (layers.py pre_process).
    const bool gathered_input = plan.sequence_parallel && tp > 1 && op.gemm_k == model.hidden_size;
    sum += kHalf * m * k / (gathered_input ? tp : 1) + kHalf * m * n;
  }
  return sum;
}

}  // namespace trainsim
