// Issue 18: DeepSeek-V3's memory savings (arXiv 2412.19437, 3.2.3 "Extremely Memory Saving with
// Minimal Overhead" and 3.3.3 "Low-Precision Storage and Communication"), each against its bytes in
// closed form on DeepSeek-V3's MoE layer (TP1, no SP, one 4096-token sequence, EP64, balanced
// routing): recompute of the norms (Megatron-Core's layernorm module) and of the MLA up projections
// (mla_up_proj), the MoE SwiGLU output recomputed from its input (moe_act), FP8 caching of Linear
// inputs with the report's exceptions, BF16 AdamW moments, the EMA in host memory and the MTP
// module sharing the embedding on DualPipe's first and last devices. Plus the time side: the
// recomputed up projections count in HFU, not MFU.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include "../model/reference_models.hpp"
#include "trainsim/common/error.hpp"
#include "trainsim/config/scenario.hpp"
#include "trainsim/memory/memory_model.hpp"
#include "trainsim/model/activation_storage.hpp"
#include "trainsim/model/workload.hpp"

using namespace trainsim;
using namespace trainsim::testing;

namespace {

const std::string root = TRAINSIM_SOURCE_DIR;

// DeepSeek-V3's dimensions as the closed forms read them.
constexpr double T = 4096, h = 7168, qr = 1536, kvr = 512, rope = 64, heads = 128, qk = 192, vd = 128;
constexpr double E = 256, k = 8, fe = 2048, fs = 2048;

ParallelPlan deepseek_plan() {
  ParallelPlan p = plan(1, 1, 64, 1, 64, 4096);
  p.expert_model_parallel_size = 64;
  p.precision = Precision::fp8;
  return p;
}

const LayerWorkload& moe_layer(const Workload& w) {
  for (const auto& layer : w.layer_types)
    if (layer.kind == "moe") return layer;
  FAIL("no MoE layer");
  return w.layer_types.front();
}

double kept(const ParallelPlan& p) {
  const ModelSpec m = deepseek_v3();
  return kept_layer_activation_bytes(moe_layer(build_workload(m, p)), m, p);
}

// Korthikanti's bytes of the MoE layer, op by op (workload.cpp): the norms' inputs 2Th each, q_down
// the norm output 2Th, q/kv norms and up projections their inputs 2T qr and 2T kvr each, attention
// Q K V 2T heads (2 qk + v) and the fp32 LSE 4 T heads, out_proj 2T heads v, the router 2Th + fp32
// probabilities 4TE, top-k 12Tk, the experts' input 2Tkh, SwiGLU input 2Tk 2fe, down input 2Tk fe,
// unpermute the expert outputs 2Tkh, the shared expert's SwiGLU input 2T 2fs and down input 2T fs.
double korthikanti_moe_layer() {
  return 2 * T * h + 2 * T * h + 2 * (2 * T * qr) + 2 * (2 * T * kvr) + 2 * T * heads * (2 * qk + vd) +
         4 * T * heads + 2 * T * heads * vd + 2 * T * h + (2 * T * h + 4 * T * E) + 12 * T * k + 2 * T * k * h +
         2 * T * k * 2 * fe + 2 * T * k * fe + 2 * T * k * h + 2 * T * 2 * fs + 2 * T * fs;
}

}  // namespace

TEST_CASE("defaults keep Korthikanti's bytes to the bit", "[memory][activation_storage]") {
  ParallelPlan p = deepseek_plan();
  const ModelSpec m = deepseek_v3();
  const Workload w = build_workload(m, p);
  CHECK(kept(p) == Approx(korthikanti_moe_layer()).epsilon(1e-12));
  for (RecomputeGranularity g : {RecomputeGranularity::none, RecomputeGranularity::selective}) {
    p.recompute_granularity = g;
    for (const LayerWorkload& layer : w.layer_types)
      CHECK(kept_layer_activation_bytes(layer, m, p) == layer_activation_bytes(layer, m, p));
  }
  p.recompute_granularity = RecomputeGranularity::full;
  CHECK(kept_layer_activation_bytes(moe_layer(w), m, p) == layer_input_bytes(m, p));
}

TEST_CASE("each recompute module drops its outputs, in closed form", "[memory][activation_storage]") {
  ParallelPlan p = deepseek_plan();
  const double base = kept(p);
  p.recompute_granularity = RecomputeGranularity::selective;
  p.recompute_modules.core_attn = false;
  CHECK(kept(p) == Approx(base));  // flash attention keeps no score matrix to drop

  SECTION("layernorm: q_down's and the router's copies of the norm outputs (2Th each)") {
    p.recompute_modules.layernorm = true;
    CHECK(base - kept(p) == Approx(2 * T * h + 2 * T * h));
  }
  SECTION("mla_up_proj: the up projections' inputs and Q, K, V; the rope key stays") {
    p.recompute_modules.mla_up_proj = true;
    CHECK(base - kept(p) == Approx(2 * T * qr + 2 * T * kvr + 2 * T * heads * (2 * qk + vd) - 2 * T * rope));
  }
  SECTION("moe_act: the SwiGLU output the expert down projection keeps") {
    p.recompute_modules.moe_act = true;
    CHECK(base - kept(p) == Approx(2 * T * k * fe));
  }
}

TEST_CASE("FP8 caching of Linear inputs, with DeepSeek-V3's exceptions", "[memory][activation_storage]") {
  CHECK(kFp8CachedBytes == 1.0 + 4.0 / 128.0);  // 1 byte + an fp32 scale per 1x128 tile
  CHECK(kE5m6CachedBytes == 1.5 + 4.0 / 128.0);  // 12 bits, same tiles
  ParallelPlan p = deepseek_plan();
  const double base = kept(p);
  const double f8 = kFp8CachedBytes, e56 = kE5m6CachedBytes;
  // The FP8 Linears' inputs (router and LM head stay BF16): q_down Th, q_up T qr, kv_up T kvr,
  // out_proj T heads v, expert gate/up Tkh, expert down Tk fe, shared down T fs elements.
  const double linear_elements = T * h + T * qr + T * kvr + T * k * h + T * k * fe + T * fs;
  const double out_elements = T * heads * vd;
  p.fp8_activation_cache = Fp8ActivationCache::linear_inputs;
  CHECK(base - kept(p) == Approx((2 - f8) * (linear_elements + out_elements)));
  // deepseek_v3: the attention output in E5M6, the routed SwiGLU input (Tk 2fe) in FP8 too.
  p.fp8_activation_cache = Fp8ActivationCache::deepseek_v3;
  CHECK(base - kept(p) ==
        Approx((2 - f8) * linear_elements + (2 - e56) * out_elements + (2 - f8) * T * k * 2 * fe));
  // Only on FP8 plans: a BF16 plan keeps 16 bits whatever the key says.
  p.precision = Precision::bf16;
  CHECK(kept(p) == Approx(base));
}

TEST_CASE("the flex dispatcher's unpermute keeps the probabilities, not the expert outputs",
          "[memory][activation_storage][moe]") {
  const ParallelPlan p = deepseek_plan();
  ModelSpec m = deepseek_v3();
  const Workload w = build_workload(m, p);
  const double alltoall = kept_layer_activation_bytes(moe_layer(w), m, p);
  m.moe->token_dispatcher = TokenDispatcher::flex;
  const double flex = kept_layer_activation_bytes(moe_layer(build_workload(m, p)), m, p);
  // 2 bytes x Tk copies x h of expert outputs -> 4 bytes x Tk fp32 probabilities.
  CHECK(alltoall - flex == Approx(2 * T * k * h - 4 * T * k));
}

TEST_CASE("DeepSeek-V3's whole set: the layer in closed form", "[memory][activation_storage]") {
  ParallelPlan p = deepseek_plan();
  p.recompute_granularity = RecomputeGranularity::selective;
  p.recompute_modules = {false, true, true, true};
  p.fp8_activation_cache = Fp8ActivationCache::deepseek_v3;
  const double f8 = kFp8CachedBytes, e56 = kE5m6CachedBytes;
  // input norm 2Th, q/kv norms' inputs, LSE + rope key, out_proj E5M6, pre-MLP norm 2Th, router
  // probs, top-k, experts' FP8 input and SwiGLU input, unpermute (BF16 combine), shared SwiGLU
  // input (BF16: not a routed expert's), shared down FP8.
  const double expected = 2 * T * h + 2 * T * qr + 2 * T * kvr + 4 * T * heads + 2 * T * rope + e56 * T * heads * vd +
                          2 * T * h + 4 * T * E + 12 * T * k + f8 * T * k * h + f8 * T * k * 2 * fe + 2 * T * k * h +
                          2 * T * 2 * fs + f8 * T * fs;
  CHECK(kept(p) == Approx(expected).epsilon(1e-12));
  CHECK(kept(p) / korthikanti_moe_layer() == Approx(0.486).margin(0.001));
}

TEST_CASE("recomputed ops: forward time again, matmul FLOPs in HFU only", "[memory][activation_storage][time]") {
  const ModelSpec m = deepseek_v3();
  ParallelPlan p = deepseek_plan();
  const Workload before = build_workload(m, p);
  p.recompute_granularity = RecomputeGranularity::selective;
  p.recompute_modules = {false, true, true, true};
  const Workload after = build_workload(m, p);
  // The q and kv up projections per token and layer, the 61 layers and the MTP module's.
  const double up = 2 * qr * heads * qk + 2 * kvr * heads * (128 + vd);
  CHECK(recompute_module_flops_per_token(m, p) == up);
  CHECK(after.model_flops_per_step == before.model_flops_per_step);
  CHECK(after.hardware_flops_per_step - before.hardware_flops_per_step == Approx(64 * 4096.0 * 62 * up));
  std::string recomputed;
  for (const Op& op : moe_layer(after).ops)
    if (recomputed_in_backward(op, p)) recomputed += op.name + " ";
  CHECK(recomputed == "input_norm q_norm q_up_proj kv_norm kv_up_proj mla_rope_qkv post_attention_norm expert_activation ");
  // The MTP module's copy of the layer recomputes the same.
  int mtp = 0;
  for (const Op& op : after.head.ops) mtp += recomputed_in_backward(op, p);
  CHECK(mtp == 8);
  // Megatron's default list (core_attn) recomputes nothing else.
  p.recompute_modules = {};
  for (const Op& op : moe_layer(after).ops) CHECK_FALSE(recomputed_in_backward(op, p));
}

TEST_CASE("AdamW moments in BF16, EMA in host memory, MTP sharing the embedding", "[memory][optimizer]") {
  const ModelSpec m = deepseek_v3();
  ParallelPlan p = plan(1, 16, 128, 1, 1920, 4096);
  p.expert_model_parallel_size = 64;
  p.use_distributed_optimizer = true;
  p.schedule = PipelineSchedule::dualpipe;
  p.layers_per_stage = {4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 1};
  const MemoryReport plain = memory_of(m, p, 2048, 80.0 * (1 << 30));
  const Workload w = build_workload(m, p);
  const StageMemory& s0 = plain.stages.at(0);
  const StageMemory& s5 = plain.stages.at(5);
  // Expert parameters shard over the expert DP group (DP / EP = 2), the rest over DP.
  auto shard = [](const StageMemory& s, double expert) { return (s.parameters - expert) / 128 + expert / 2; };
  double expert5 = 0;
  for (int l : {20, 21, 22, 23, 40, 41, 42, 43}) expert5 += w.layer_types.at(w.layer_type_of.at(l)).expert_parameters;
  CHECK(s5.optimizer_states == Approx(12 * shard(s5, expert5)));

  p.exp_avg_dtype = "bf16";
  p.exp_avg_sq_dtype = "bf16";
  CHECK(memory_of(m, p, 2048, 80.0 * (1 << 30)).stages.at(5).optimizer_states == Approx(8 * shard(s5, expert5)));
  p.ema_parameters = EmaPlacement::device;
  CHECK(memory_of(m, p, 2048, 80.0 * (1 << 30)).stages.at(5).optimizer_states == Approx(12 * shard(s5, expert5)));
  p.ema_parameters = EmaPlacement::host;
  const StageMemory host5 = memory_of(m, p, 2048, 80.0 * (1 << 30)).stages.at(5);
  CHECK(host5.optimizer_states == Approx(8 * shard(s5, expert5)));
  CHECK(host5.offloaded_to_host == Approx(4 * shard(s5, expert5)));

  // DualPipe: the first and the last device hold the embedding, the head and the MTP module, whose
  // embedding is the main model's there (V x h, V padded to 129280), so neither holds a copy.
  const double embedding = 129280.0 * h;
  CHECK(w.head.parameters > embedding);  // the MTP module's copy is in the head's count
  double layers0 = 0;
  for (int l : {0, 1, 2, 3, 60}) layers0 += w.layer_types.at(w.layer_type_of.at(l)).parameters;
  CHECK(s0.parameters == Approx(layers0 + w.embedding.parameters + w.head.parameters - embedding));
  CHECK(plain.stages.at(15).parameters == Approx(s0.parameters));
  // 1F1B: the embedding on the first stage, the head with the MTP's copy on the last.
  p.schedule = PipelineSchedule::one_f_one_b;
  const MemoryReport one = memory_of(m, p, 2048, 80.0 * (1 << 30));
  double layers15 = w.layer_types.at(w.layer_type_of.at(60)).parameters;
  CHECK(one.stages.at(15).parameters == Approx(layers15 + w.head.parameters));
}

TEST_CASE("the memory keys load, and refuse what Megatron refuses", "[config][activation_storage]") {
  const std::string path = root + "/scenarios/deepseek-v3-h800-2048.yaml";
  const Scenario s = load_scenario(path);
  CHECK(s.plan.recompute_granularity == RecomputeGranularity::selective);
  CHECK(s.plan.recompute_modules == RecomputeModules{false, true, true, true});
  CHECK(s.plan.fp8_activation_cache == Fp8ActivationCache::deepseek_v3);
  CHECK(s.plan.exp_avg_dtype == "bf16");
  CHECK(s.plan.exp_avg_sq_dtype == "bf16");
  CHECK(s.plan.ema_parameters == EmaPlacement::host);
  auto error_of = [&](const std::vector<Override>& set) {
    try {
      load_scenario(path, set);
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK_THAT(error_of({{"plan.recompute_modules", "layernorm,moe"}}), Catch::Contains("unknown module 'moe'"));
  CHECK_THAT(error_of({{"plan.recompute_granularity", "full"}}),
             Catch::Contains("given with recompute_granularity full"));
  CHECK_THAT(error_of({{"plan.precision", "bf16"}}), Catch::Contains("deepseek_v3 on a bf16 plan"));
  CHECK_THAT(error_of({{"plan.exp_avg_dtype", "fp8"}}), Catch::Contains("plan.exp_avg_dtype"));
  // A scenario without the keys keeps every default.
  const ParallelPlan plain = load_scenario(root + "/scenarios/mixtral-8x7b-910b3-64.yaml").plan;
  CHECK(plain.recompute_modules == RecomputeModules{});
  CHECK(plain.fp8_activation_cache == Fp8ActivationCache::none);
  CHECK(plain.exp_avg_dtype == "fp32");
  CHECK(plain.ema_parameters == EmaPlacement::none);
  // Megatron's default list, written out, is the default.
  CHECK(load_scenario(path, {{"plan.recompute_modules", " core_attn "}}).plan.recompute_modules == RecomputeModules{});
}
