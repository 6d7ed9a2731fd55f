// torchtitan's model code as its 2024-12 benchmarks ran it (framework fsdp; framework.hpp
// selective_recompute torchtitan_op, eager_model_ops, torch_compile): the per-op selective
// checkpointing policy in closed form, and the eager op chains that torch.compile fuses.
#include <catch2/catch.hpp>

#include "reference_models.hpp"
#include "trainsim/framework/framework.hpp"
#include "trainsim/model/activation_storage.hpp"
#include "trainsim/model/workload.hpp"

using namespace trainsim;
using namespace trainsim::testing;

namespace {

// Llama 3.1 8B (h 4096, 32 heads of 128, 8 KV heads, ffn 14336), one device, two sequences of 8192.
ModelSpec llama3_8b() { return llama(4096, 32, 32, 8, 14336, 128256); }
constexpr double kTokens = 2 * 8192.0;

ParallelPlan titan(RecomputeGranularity recompute, bool compiled = false) {
  ParallelPlan p = plan(1, 1, 8, 2, 16, 8192);
  p.framework = Framework::fsdp;
  p.zero_stage = 3;
  p.recompute_granularity = recompute;
  p.torch_compile = compiled;
  return p;
}


}  // namespace

TEST_CASE("torchtitan's per-op checkpointing saves the 1st, 3rd, 5th and 7th Linear of a block and the attention "
          "output, and recomputes the rest",
          "[model][recompute][torchtitan]") {
  const ModelSpec m = llama3_8b();
  const ParallelPlan p = titan(RecomputeGranularity::selective);
  REQUIRE(framework_entry(p.framework).selective_recompute.value == SelectiveRecompute::torchtitan_op);
  const LayerWorkload layer = build_workload(m, p).layer_types[0];
  const double q = 4096, kv = 1024, h = 4096, ffn = 14336;
  // wq (1) saved, wk (2) recomputed, wv (3) saved: one fused op, a sixth of its work recomputed.
  const Op& qkv = op_named(layer, "qkv");
  CHECK(qkv.op_sac);
  CHECK(qkv.op_sac_recompute_share == Approx(kv / (q + 2 * kv)));
  CHECK(qkv.op_sac_saved_bytes == 2 * kTokens * (q + kv));
  // wo (4) recomputed; w1 (5) saved, w3 (6) recomputed; w2 (7) saved.
  CHECK(op_named(layer, "out_proj").op_sac_recompute_share == 1.0);
  CHECK(op_named(layer, "out_proj").op_sac_saved_bytes == 0.0);
  CHECK(op_named(layer, "mlp_gate_up").op_sac_recompute_share == 0.5);
  CHECK(op_named(layer, "mlp_gate_up").op_sac_saved_bytes == 2 * kTokens * ffn);
  CHECK(op_named(layer, "mlp_down").op_sac_recompute_share == 0.0);
  CHECK(op_named(layer, "mlp_down").op_sac_saved_bytes == 2 * kTokens * h);
  // The flash kernel's output and its fp32 log-sum-exp per query row and head.
  const Op& attention = op_named(layer, "attention_core");
  CHECK(attention.op_sac_recompute_share == 0.0);
  CHECK(attention.op_sac_saved_bytes == 2 * kTokens * q + 4 * 2 * 32 * 8192.0);
  // Every elementwise op runs again and keeps nothing.
  for (const char* name : {"input_norm", "rotary", "gqa_repeat_kv", "post_attention_norm", "mlp_gated_activation"}) {
    CHECK(recomputed_share(op_named(layer, name), p) == 1.0);
    CHECK(kept_activation_bytes(op_named(layer, name), m, p) == 0.0);
  }
  // The block keeps those outputs and its input.
  const double saved = 2 * kTokens * (q + kv) + 2 * kTokens * ffn + 2 * kTokens * h + 2 * kTokens * q + 4 * 2 * 32 * 8192.0;
  CHECK(kept_layer_activation_bytes(layer, m, p) == Approx(saved + 2 * kTokens * h).epsilon(1e-12));
  // Less than the block keeps without recompute, more than full recompute's input.
  const LayerWorkload none = build_workload(m, titan(RecomputeGranularity::none)).layer_types[0];
  CHECK(kept_layer_activation_bytes(layer, m, p) < 0.5 * none.activation_bytes);
  CHECK(kept_layer_activation_bytes(layer, m, p) > layer_input_bytes(m, p));
}

TEST_CASE("torchtitan's per-op checkpointing adds the recomputed Linears to the hardware FLOPs", "[model][recompute][torchtitan]") {
  const ModelSpec m = llama3_8b();
  const Workload w = build_workload(m, titan(RecomputeGranularity::selective));
  // Per token and layer, the recomputed matmuls: wk 2 h kv, wo 2 q h, w3 2 h ffn; the elementwise
  // ops' few FLOPs per element on top (under 1% of it).
  const double per_token_layer = 2.0 * 4096 * 1024 + 2.0 * 4096 * 4096 + 2.0 * 4096 * 14336;
  const double gemm = per_token_layer * 32 * 16 * 8192.0;
  CHECK(w.recompute_flops_per_step >= gemm);
  CHECK(w.recompute_flops_per_step < 1.01 * gemm);
  // Megatron-Core's selective recompute of the same model with flash attention recomputes nothing.
  ParallelPlan mcore = titan(RecomputeGranularity::selective);
  mcore.framework = Framework::megatron_core;
  mcore.zero_stage = 0;
  CHECK(build_workload(m, mcore).layer_types[0].ops.front().op_sac == false);
}

TEST_CASE("torchtitan's eager op chains: torch.compile brings each back to the fused op's bytes", "[model][torchtitan]") {
  const ModelSpec m = llama3_8b();
  const LayerWorkload eager = build_workload(m, titan(RecomputeGranularity::none)).layer_types[0];
  const LayerWorkload compiled = build_workload(m, titan(RecomputeGranularity::none, true)).layer_types[0];
  ParallelPlan mcore = titan(RecomputeGranularity::none);
  mcore.framework = Framework::megatron_core;
  mcore.zero_stage = 0;
  const LayerWorkload fused = build_workload(m, mcore).layer_types[0];
  const double n = kTokens * 4096;  // a norm's elements
  CHECK(op_named(eager, "input_norm").forward_bytes == 36 * n);
  CHECK(op_named(eager, "input_norm").backward_bytes == 92 * n);
  const double qk = kTokens * (4096 + 1024);
  CHECK(op_named(eager, "rotary").forward_bytes == 20 * qk);
  const double act = kTokens * 14336;
  CHECK(op_named(eager, "mlp_gated_activation").forward_bytes == 10 * act);
  CHECK(op_named(eager, "mlp_gated_activation").backward_bytes == 18 * act);
  for (const char* name : {"input_norm", "rotary", "mlp_gated_activation", "post_attention_norm"}) {
    CHECK(op_named(compiled, name).forward_bytes == op_named(fused, name).forward_bytes);
    CHECK(op_named(compiled, name).backward_bytes == op_named(fused, name).backward_bytes);
    CHECK(op_named(compiled, name).activation_bytes == op_named(fused, name).activation_bytes);
  }
  // repeat_kv copies K and V out to the 32 query heads in both: read 2 x 1024, write 2 x 4096 wide.
  for (const LayerWorkload* layer : {&eager, &compiled}) {
    const Op& repeat = op_named(*layer, "gqa_repeat_kv");
    CHECK(repeat.forward_bytes == 2 * kTokens * (2 * 1024 + 2 * 4096));
    CHECK(repeat.activation_bytes == 2 * kTokens * (2 * 4096 - 2 * 1024));
  }
  bool fused_has_repeat = false;
  for (const auto& op : fused.ops) fused_has_repeat |= op.name == "gqa_repeat_kv";
  CHECK_FALSE(fused_has_repeat);
}
