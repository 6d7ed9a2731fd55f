// Long context (issue 17): sliding-window and packed-document attention work, the
// context-parallel variants' traffic and memory, their plan checks and the HF fields.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <string>

#include "reference_models.hpp"
#include "trainsim/common/error.hpp"
#include "trainsim/config/scenario.hpp"
#include "trainsim/memory/memory_model.hpp"
#include "trainsim/model/workload.hpp"
#include "trainsim/plan/plan_check.hpp"

using namespace trainsim;
using namespace trainsim::testing;

namespace {

const std::string kRoot = TRAINSIM_SOURCE_DIR;


const CommOp* comm_named(const LayerWorkload& layer, const std::string& name) {
  for (const auto& c : layer.comms)
    if (c.name == name) return &c;
  return nullptr;
}

// Mistral 7B v0.1 (HF config.json): Llama shape with GQA 8, FFN 14336, window 4096.
ModelSpec mistral_7b() {
  ModelSpec m = llama(4096, 32, 32, 8, 14336, 32000);
  m.name = "mistral-7b";
  m.sliding_window = 4096;
  return m;
}

// Brute force: sum over queries i of the keys j <= i with i - j < w (w <= 0: no window).
double brute_positions(int s, int w) {
  double n = 0;
  for (int i = 0; i < s; ++i) n += (w > 0 ? std::min(i + 1, w) : i + 1);
  return n;
}

bool has_problem(const std::vector<Diagnostic>& out, const std::string& key, const std::string& text) {
  return std::any_of(out.begin(), out.end(), [&](const Diagnostic& d) {
    return d.key_path == key && d.problem.find(text) != std::string::npos;
  });
}

}  // namespace

TEST_CASE("causal key positions: the triangle, a sliding window, brute force", "[model][long_context]") {
  CHECK(causal_key_positions(32768, 0) == 32768.0 * 32769.0 / 2);
  CHECK(causal_key_positions(32768, 32768) == 32768.0 * 32769.0 / 2);
  CHECK(causal_key_positions(32768, 65536) == 32768.0 * 32769.0 / 2);
  // w(w+1)/2 + (s - w) w with s = 32768, w = 4096: 8,390,656 + 117,440,512.
  CHECK(causal_key_positions(32768, 4096) == 125831168.0);
  for (int s : {1, 7, 100, 513})
    for (int w : {0, 1, 3, 64, 100, 1000}) CHECK(causal_key_positions(s, w) == brute_positions(s, w));
}

TEST_CASE("packed documents: s x sum w_k P(L_k) / sum w_k L_k", "[model][long_context]") {
  // Eight 4096-token documents in 32768 tokens: 8 x 4096 x 4097 / 2.
  CHECK(attention_key_positions(32768, 0, {4096}, {}) == 8.0 * 4096 * 4097 / 2);
  // 3 : 1 documents of 1024 and 4096 tokens.
  const double expected = 32768.0 * (3 * (1024.0 * 1025 / 2) + 4096.0 * 4097 / 2) / (3 * 1024.0 + 4096);
  CHECK(attention_key_positions(32768, 0, {1024, 4096}, {3, 1}) == Approx(expected).epsilon(1e-15));
  // A document longer than the sequence is cut into sequence-long pieces and its remainder:
  // 100000 = 12 x 8192 + 1696, thirteen causal problems (not one 8192-token piece).
  const double cut = 8192.0 * (12 * causal_key_positions(8192, 0) + causal_key_positions(1696, 0)) / 100000.0;
  CHECK(attention_key_positions(8192, 0, {100000}, {}) == Approx(cut).epsilon(1e-15));
  CHECK(attention_key_positions(8192, 0, {100000}, {}) < causal_key_positions(8192, 0));
  // An exact multiple is whole sequences; a long document's tokens weigh as its pieces' count.
  CHECK(attention_key_positions(8192, 0, {16384}, {}) == causal_key_positions(8192, 0));
  const double mixed = 8192.0 * (causal_key_positions(512, 0) + 3 * causal_key_positions(8192, 0)) / (512 + 3 * 8192.0);
  CHECK(attention_key_positions(8192, 0, {512, 24576}, {}) == Approx(mixed).epsilon(1e-15));
  const auto pieces = document_pieces(8192, {512, 100000}, {5, 2});
  REQUIRE(pieces.size() == 3);
  CHECK(pieces[0].length == 512);
  CHECK(pieces[0].weight == 5);
  CHECK(pieces[1].length == 8192);
  CHECK(pieces[1].weight == 24);
  CHECK(pieces[2].length == 1696);
  CHECK(pieces[2].weight == 2);
  // A window inside each document.
  CHECK(attention_key_positions(32768, 1024, {4096}, {}) == 8.0 * causal_key_positions(4096, 1024));
  // No documents: the sequence is one document.
  CHECK(attention_key_positions(4096, 0, {}, {}) == causal_key_positions(4096, 0));
}

TEST_CASE("sliding window scales the fused attention op, model FLOPs keep Megatron's count", "[model][long_context]") {
  ParallelPlan p = plan(2, 1, 1, 1, 8, 32768);
  const ModelSpec windowed = mistral_7b();
  ModelSpec full = windowed;
  full.sliding_window = 0;
  const Workload w = build_workload(windowed, p);
  const Workload f = build_workload(full, p);
  const double ratio = 125831168.0 / (32768.0 * 32769.0 / 2);
  CHECK(attention_work_ratio(windowed, p, 0) == Approx(ratio).epsilon(1e-15));
  // 4 b (a/t) s^2 d over the full matrix, times the window's share of the causal triangle.
  const double full_flops = 4.0 * 1 * (32.0 / 2) * 32768.0 * 32768.0 * 128;
  CHECK(op_named(f.layer_types[0], "attention_core").forward_flops == full_flops);
  CHECK(op_named(w.layer_types[0], "attention_core").forward_flops == Approx(full_flops * ratio).epsilon(1e-15));
  CHECK(op_named(w.layer_types[0], "attention_core").backward_flops == Approx(2 * full_flops * ratio).epsilon(1e-15));
  CHECK(w.layer_types[0].kind == "dense_sliding_window");
  // MFU's numerator: Megatron's num_floating_point_operations has no window term.
  CHECK(w.model_flops_per_step == f.model_flops_per_step);
  // Every other op is the same.
  REQUIRE(w.layer_types[0].ops.size() == f.layer_types[0].ops.size());
  for (std::size_t i = 0; i < f.layer_types[0].ops.size(); ++i) {
    if (f.layer_types[0].ops[i].name == "attention_core") continue;
    CHECK(w.layer_types[0].ops[i].forward_flops == f.layer_types[0].ops[i].forward_flops);
    CHECK(w.layer_types[0].ops[i].activation_bytes == f.layer_types[0].ops[i].activation_bytes);
  }
  // A window at least as long as the sequence is full attention, exactly.
  p.seq_length = 4096;
  CHECK(attention_work_ratio(windowed, p, 0) == 1.0);
}

TEST_CASE("attention without flash kernels computes the full masked matrix under a window", "[model][long_context]") {
  ParallelPlan p = plan(2, 1, 1, 1, 8, 8192);
  p.use_flash_attn = false;
  ModelSpec full = mistral_7b();
  full.sliding_window = 0;
  const Workload w = build_workload(mistral_7b(), p);
  const Workload f = build_workload(full, p);
  CHECK(op_named(w.layer_types[0], "attention_scores").forward_flops ==
        op_named(f.layer_types[0], "attention_scores").forward_flops);
  CHECK(op_named(w.layer_types[0], "attention_scores").forward_bytes ==
        op_named(f.layer_types[0], "attention_scores").forward_bytes);
}

TEST_CASE("alternating local and global layers: two layer types in the model's order", "[model][long_context]") {
  ModelSpec m = mistral_7b();
  m.num_layers = 6;
  for (int i = 0; i < 6; ++i) m.window_layers.push_back(i % 2 == 0);  // Gemma-2: even layers local
  const ParallelPlan p = plan(1, 1, 1, 1, 1, 16384);
  const Workload w = build_workload(m, p);
  REQUIRE(w.layer_types.size() == 2);
  CHECK(w.layer_type_of == std::vector<int>{0, 1, 0, 1, 0, 1});
  CHECK(w.layer_types[0].kind == "dense_sliding_window");
  CHECK(w.layer_types[1].kind == "dense");
  const double local = op_named(w.layer_types[0], "attention_core").forward_flops;
  const double global = op_named(w.layer_types[1], "attention_core").forward_flops;
  CHECK(local / global == Approx(causal_key_positions(16384, 4096) / causal_key_positions(16384, 0)).epsilon(1e-14));
}

TEST_CASE("packed documents scale the attention op by sum L^2 over s^2", "[model][long_context]") {
  ParallelPlan p = plan(1, 1, 1, 1, 8, 32768);
  const Workload plain = build_workload(llama2_7b(), p);
  p.document_lengths = {2048};
  const Workload packed = build_workload(llama2_7b(), p);
  // Sixteen 2048-token documents: 16 x 2048 x 2049 / 2 key positions instead of 32768 x 32769 / 2.
  const double ratio = (16.0 * 2048 * 2049) / (32768.0 * 32769);
  CHECK(op_named(packed.layer_types[0], "attention_core").forward_flops ==
        Approx(op_named(plain.layer_types[0], "attention_core").forward_flops * ratio).epsilon(1e-15));
  CHECK(packed.model_flops_per_step == plain.model_flops_per_step);
}

TEST_CASE("default plan: no window, no packing, p2p: the attention op is untouched", "[model][long_context]") {
  const ParallelPlan p = plan(1, 1, 1, 1, 8, 4096);
  CHECK(attention_work_ratio(llama2_7b(), p, 0) == 1.0);
  CHECK(p.cp_comm_type == CpCommType::p2p);
}

TEST_CASE("CP variants: bytes per rank as each formula says", "[model][long_context][cp]") {
  // Llama-3-8B shape, TP 2, CP 4, s 32768: local tokens b s / c = 8192.
  const ModelSpec m = llama(4096, 32, 32, 8, 14336, 128256);
  ParallelPlan p = plan(2, 1, 1, 1, 8, 32768);
  p.context_parallel_size = 4;
  const double c = 4, tokens = 8192, t = 2;
  const double kv = 2.0 * tokens * (1024 + 1024) / t;  // local K and V, 16 bit
  const double qkv = 2.0 * tokens * (4096 + 2048) / t;
  const double out = 2.0 * tokens * 4096 / t;

  p.cp_comm_type = CpCommType::p2p;
  CpTraffic ring = cp_traffic(m, p);
  CHECK(ring.forward_bytes == (c - 1) * kv);
  CHECK(ring.backward_bytes == 2 * (c - 1) * kv);
  CHECK(ring.working_bytes == 0);
  LayerWorkload layer = build_workload(m, p).layer_types[0];
  REQUIRE(comm_named(layer, "cp_kv_exchange"));
  CHECK(comm_named(layer, "cp_kv_exchange")->bytes == (c - 1) * kv);
  CHECK(comm_named(layer, "cp_kv_exchange")->kind == CollectiveKind::send_recv);
  CHECK(comm_named(layer, "cp_kv_exchange_backward")->bytes == 2 * (c - 1) * kv);

  p.cp_comm_type = CpCommType::all_gather;
  CpTraffic gather = cp_traffic(m, p);
  CHECK(gather.forward_bytes == c * kv);
  CHECK(gather.backward_bytes == c * kv);
  CHECK(gather.backward_grad_bytes == c * kv);
  CHECK(gather.working_bytes == 2 * c * kv);
  layer = build_workload(m, p).layer_types[0];
  REQUIRE(comm_named(layer, "cp_all_gather_kv"));
  CHECK(comm_named(layer, "cp_all_gather_kv")->kind == CollectiveKind::all_gather);
  CHECK(comm_named(layer, "cp_all_gather_kv")->group == CommGroup::cp);
  CHECK(comm_named(layer, "cp_all_gather_kv")->bytes == c * kv);
  CHECK(comm_named(layer, "cp_all_gather_kv_backward")->bytes == c * kv);
  CHECK(comm_named(layer, "cp_reduce_scatter_dkv")->kind == CollectiveKind::reduce_scatter);
  CHECK(comm_named(layer, "cp_reduce_scatter_dkv")->bytes == c * kv);
  CHECK(!comm_named(layer, "cp_kv_exchange"));

  p.cp_comm_type = CpCommType::a2a;
  CpTraffic ulysses = cp_traffic(m, p);
  CHECK(ulysses.forward_bytes == qkv);
  CHECK(ulysses.forward_output_bytes == out);
  CHECK(ulysses.backward_bytes == out);
  CHECK(ulysses.backward_grad_bytes == qkv);
  CHECK(ulysses.working_bytes == qkv);
  layer = build_workload(m, p).layer_types[0];
  REQUIRE(comm_named(layer, "cp_all_to_all_qkv"));
  CHECK(comm_named(layer, "cp_all_to_all_qkv")->kind == CollectiveKind::all_to_all);
  CHECK(comm_named(layer, "cp_all_to_all_qkv")->bytes == qkv);
  CHECK(comm_named(layer, "cp_all_to_all_output")->bytes == out);
  CHECK(comm_named(layer, "cp_all_to_all_output")->phase == Phase::forward);
  CHECK(comm_named(layer, "cp_all_to_all_output_grad")->bytes == out);
  CHECK(comm_named(layer, "cp_all_to_all_qkv_grad")->bytes == qkv);

  // Every variant does the same attention work per rank (1/c of the heads or of the queries).
  const double ring_flops = [&] {
    ParallelPlan q = p;
    q.cp_comm_type = CpCommType::p2p;
    return op_named(build_workload(m, q).layer_types[0], "attention_core").forward_flops;
  }();
  CHECK(op_named(layer, "attention_core").forward_flops == ring_flops);

  // CP 1: no traffic whatever the variant.
  p.context_parallel_size = 1;
  CHECK(cp_traffic(m, p).forward_bytes == 0);
  CHECK(cp_traffic(m, p).working_bytes == 0);
}

TEST_CASE("CP memory: the all-gather's full K, V and their gradients sit on the working set",
          "[memory][long_context][cp]") {
  // PP 2: stage 0 holds no logits, so its transient is the attention's working set.
  const ModelSpec m = llama(4096, 32, 32, 8, 14336, 32000);
  ParallelPlan p = plan(2, 2, 1, 1, 8, 32768);
  p.context_parallel_size = 4;
  auto transient = [&](CpCommType type) { return stage0_transient_with(m, p, type); };
  const double kv = 2.0 * 8192 * 2048 / 2;
  const double qkv = 2.0 * 8192 * 6144 / 2;
  const double ring = transient(CpCommType::p2p);
  CHECK(transient(CpCommType::all_gather) - ring == Approx(2 * 4 * kv).epsilon(1e-12));
  CHECK(transient(CpCommType::a2a) - ring == Approx(qkv).epsilon(1e-12));
}

TEST_CASE("CP plan checks: Ulysses heads, windows on the ring, packing with the all-gather",
          "[plan][long_context][cp]") {
  HardwareSpec hw;
  hw.node.devices_per_node = 8;
  // Llama 3.1 405B, TP 8 CP 16: one KV head per TP rank cannot be split 16 ways.
  ParallelPlan p = plan(8, 16, 8, 1, 128, 131072);
  p.context_parallel_size = 16;
  p.cp_comm_type = CpCommType::a2a;
  derive_plan(p, 16384);
  auto out = check_plan(llama3_405b(), hw, 16384, p);
  CHECK(has_problem(out, "plan.cp_comm_type", "does not divide the heads per TP rank (16 query, 1 key/value)"));
  p.cp_comm_type = CpCommType::all_gather;
  CHECK(!has_problem(check_plan(llama3_405b(), hw, 16384, p), "plan.cp_comm_type", ""));
  p.cp_comm_type = CpCommType::p2p;
  CHECK(!has_problem(check_plan(llama3_405b(), hw, 16384, p), "plan.cp_comm_type", ""));

  // Mistral's window with CP: all_gather or a2a, not the ring.
  ParallelPlan q = plan(1, 1, 2, 1, 8, 32768);
  q.context_parallel_size = 4;
  derive_plan(q, 8);
  out = check_plan(mistral_7b(), hw, 8, q);
  CHECK(has_problem(out, "plan.cp_comm_type", "the ring does not run sliding-window attention"));
  q.cp_comm_type = CpCommType::a2a;
  CHECK(!has_problem(check_plan(mistral_7b(), hw, 8, q), "plan.cp_comm_type", ""));

  // Packed documents: no THD layout in the all-gather variant.
  ParallelPlan r = plan(1, 1, 2, 1, 8, 32768);
  r.context_parallel_size = 4;
  r.cp_comm_type = CpCommType::all_gather;
  r.document_lengths = {2048};
  derive_plan(r, 8);
  CHECK(has_problem(check_plan(llama2_7b(), hw, 8, r), "plan.cp_comm_type", "no packed-sequence (THD) layout"));
}

TEST_CASE("HF config.json: Mistral's window, Gemma-2's alternation, Qwen2's switch", "[config][long_context]") {
  const std::string data = kRoot + "/tests/config/data/";
  const ModelSpec mistral = load_model(data + "mistral-7b-v0.1-config.json");
  CHECK(mistral.sliding_window == 4096);
  CHECK(mistral.window_layers.empty());
  CHECK(mistral.layer_has_window(31));

  const ModelSpec gemma = load_model(data + "gemma-2-9b-config.json");
  CHECK(gemma.sliding_window == 4096);
  REQUIRE(gemma.window_layers.size() == 42);
  CHECK(gemma.layer_has_window(0));
  CHECK(!gemma.layer_has_window(1));
  CHECK(gemma.layer_has_window(40));
  CHECK(!gemma.layer_has_window(41));

  // use_sliding_window false: Qwen2 attends to everything whatever sliding_window says.
  const ModelSpec qwen = load_model(data + "qwen2-7b-config.json");
  CHECK(qwen.sliding_window == 0);
  CHECK(!qwen.layer_has_window(27));
}

TEST_CASE("scenario keys: cp_comm_type and packed documents load, bad ones name the key", "[config][long_context]") {
  const std::string scenario = kRoot + "/scenarios/default.yaml";
  const Scenario s = load_scenario(
      scenario,
      {{"plan.cp_comm_type", "a2a"}, {"data.document_lengths", "[512, 4096]"}, {"data.document_weights", "[7, 1]"}});
  CHECK(s.plan.cp_comm_type == CpCommType::a2a);
  CHECK(s.plan.document_lengths == std::vector<int>{512, 4096});
  CHECK(s.plan.document_weights == std::vector<int>{7, 1});
  try {
    load_scenario(scenario, {{"plan.cp_comm_type", "ring"}});
    FAIL("ring accepted");
  } catch (const ConfigError& e) {
    CHECK(std::string(e.what()).find("plan.cp_comm_type") != std::string::npos);
    CHECK(std::string(e.what()).find("p2p, all_gather, a2a") != std::string::npos);
  }
  try {
    load_scenario(scenario, {{"data.document_lengths", "[512, 4096]"}, {"data.document_weights", "[1]"}});
    FAIL("one weight for two lengths accepted");
  } catch (const ConfigError& e) {
    CHECK(std::string(e.what()).find("data.document_weights") != std::string::npos);
  }
  // Hierarchical CP sizes on a plan without context parallelism would be ignored: refused.
  try {
    load_scenario(scenario, {{"plan.hierarchical_context_parallel_sizes", "[2, 2]"}});
    FAIL("hierarchical CP sizes with CP 1 accepted");
  } catch (const ConfigError& e) {
    CHECK_THAT(e.what(), Catch::Contains("plan.hierarchical_context_parallel_sizes: the sizes multiply to 4, but "
                                         "context_parallel_size is 1") &&
                             Catch::Contains("valid: leave it out, or context_parallel_size 4"));
  }
  // The plan's keys round-trip through plan_overrides.
  const Scenario again = load_scenario(scenario, plan_overrides(s.plan));
  CHECK(again.plan == s.plan);
}

TEST_CASE("HFU's hardware FLOPs leave out the attention a window skips, MFU's model FLOPs do not",
          "[model][long_context]") {
  ParallelPlan p = plan(2, 1, 1, 1, 8, 32768);
  p.recompute_granularity = RecomputeGranularity::selective;
  const ModelSpec windowed = mistral_7b();
  ModelSpec full = windowed;
  full.sliding_window = 0;
  const Workload w = build_workload(windowed, p);
  const Workload f = build_workload(full, p);
  const double r = causal_key_positions(32768, 4096) / causal_key_positions(32768, 0);
  const double core = attention_core_forward_flops_per_token(windowed, 32768);  // per token, per layer
  const double tokens = 8.0 * 32768;
  CHECK(w.model_flops_per_step == f.model_flops_per_step);
  // Selective recompute reruns the windowed attention core: 32 layers x r x core per token.
  CHECK(w.recompute_flops_per_step == Approx(tokens * 32 * r * core).epsilon(1e-12));
  CHECK(w.hardware_flops_per_step ==
        Approx(f.model_flops_per_step - 3 * tokens * 32 * (1 - r) * core + tokens * 32 * r * core).epsilon(1e-12));
  // Without a variant nothing moves: hardware = model + recompute, exactly as before.
  CHECK(f.hardware_flops_per_step == f.model_flops_per_step + f.recompute_flops_per_step);
  CHECK(f.recompute_flops_per_step == tokens * (32 * core));
}

TEST_CASE("MindSpeed's general CP mask: the full s^2 block, only where MindSpeed's ring runs it",
          "[plan][long_context][cp]") {
  HardwareSpec hw;
  hw.node.devices_per_node = 8;
  ParallelPlan p = plan(1, 1, 2, 1, 64, 16384);
  p.context_parallel_size = 2;
  p.framework = Framework::mindspeed;
  derive_plan(p, 8);
  const ModelSpec m = llama2_7b();
  CHECK(attention_work_ratio(m, p, 0) == 1.0);
  p.cp_attention_mask_type = CpAttentionMask::general;
  // s^2 key positions over the causal triangle's s(s+1)/2.
  CHECK(attention_work_ratio(m, p, 0) == Approx(16384.0 * 16384.0 / (16384.0 * 16385.0 / 2)).epsilon(1e-15));
  CHECK(!has_problem(check_plan(m, hw, 8, p), "plan.cp_attention_mask_type", ""));

  ParallelPlan other = p;
  other.framework = Framework::megatron_core;
  CHECK(has_problem(check_plan(m, hw, 8, other), "plan.cp_attention_mask_type", "framework megatron-core"));
  ParallelPlan ulysses = p;
  ulysses.cp_comm_type = CpCommType::a2a;
  CHECK(has_problem(check_plan(m, hw, 8, ulysses), "plan.cp_attention_mask_type", "not cp_comm_type a2a"));
  ParallelPlan packed = p;
  packed.document_lengths = {2048};
  CHECK(has_problem(check_plan(m, hw, 8, packed), "plan.cp_attention_mask_type", "no sliding window or packed"));
  ParallelPlan no_cp = plan(1, 1, 8, 1, 64, 16384);
  no_cp.framework = Framework::mindspeed;
  no_cp.cp_attention_mask_type = CpAttentionMask::general;
  derive_plan(no_cp, 8);
  CHECK(has_problem(check_plan(m, hw, 8, no_cp), "plan.cp_attention_mask_type", "context_parallel_size is 1"));
}
