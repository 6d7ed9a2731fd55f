// Model accounting: parameters, FLOPs, per-op activation bytes, collectives.
#include "trainsim/model/workload.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "reference_models.hpp"
#include "trainsim/common/error.hpp"
#include "trainsim/memory/memory_model.hpp"

using namespace trainsim;
using namespace trainsim::testing;

namespace {

double rel(double a, double b) { return std::abs(a - b) / std::abs(b); }


int count_comms(const LayerWorkload& layer, CollectiveKind kind, CommGroup group, Phase phase) {
  return static_cast<int>(std::count_if(layer.comms.begin(), layer.comms.end(), [&](const CommOp& c) {
    return c.kind == kind && c.group == group && c.phase == phase;
  }));
}

// Korthikanti et al. 2022 Table 2 shapes (their Table 3: 22B, 175B, 530B, 1T), all TP 8.
struct KorthikantiShape {
  const char* name;
  std::int64_t h;
  int a;
  int layers;
};
const KorthikantiShape kShapes[] = {
    {"22B", 6144, 64, 48}, {"175B", 12288, 96, 96}, {"530B", 20480, 128, 105}, {"1T", 25600, 160, 128}};

}  // namespace

TEST_CASE("parameter counts match published totals within 1%", "[model][parameters]") {
  CHECK(rel(count_parameters(gpt3_175b()).total, 175e9) < 0.01);
  CHECK(rel(count_parameters(llama2_7b()).total, 6.74e9) < 0.01);
  CHECK(rel(count_parameters(llama2_70b()).total, 68.98e9) < 0.01);
  CHECK(rel(count_parameters(llama3_405b()).total, 405.9e9) < 0.01);
  const ParameterCount mixtral = count_parameters(mixtral_8x7b());
  CHECK(rel(mixtral.total, 46.7e9) < 0.01);
  CHECK(rel(mixtral.active, 12.9e9) < 0.01);
  // DeepSeek-V2: 236B total, 21B activated (DeepSeek-AI 2024, abstract).
  const ParameterCount ds = count_parameters(deepseek_v2(60));
  CHECK(rel(ds.total, 236e9) < 0.01);
  CHECK(rel(ds.active, 21e9) < 0.03);
}

TEST_CASE("MoE active parameters are fewer than total, dense models have active == total", "[model][parameters]") {
  const ParameterCount moe = count_parameters(mixtral_8x7b());
  CHECK(moe.active < 0.3 * moe.total);
  const ParameterCount dense = count_parameters(llama2_7b());
  CHECK(dense.active == dense.total);
}

TEST_CASE("model FLOPs per step equal 72*B*s*l*h^2*(1 + s/(6h) + V/(12lh)) for a plain GPT", "[model][flops]") {
  struct Case {
    std::int64_t h;
    int l, a;
    std::int64_t V, s;
    int B;
  };
  const Case cases[] = {{12288, 96, 96, 50257, 2048, 1536},
                        {2304, 24, 24, 51200, 2048, 512},
                        {4096, 32, 32, 50304, 4096, 64},
                        {1024, 4, 16, 1000, 128, 3}};
  for (const auto& c : cases) {
    const ModelSpec m = plain_gpt(c.h, c.l, c.a, c.V, c.s);
    ParallelPlan p = plan(1, 1, 1, 1, c.B, static_cast<int>(c.s));
    const double h = c.h, s = c.s, l = c.l, V = c.V, B = c.B;
    const double expected = 72.0 * B * s * l * h * h * (1.0 + s / (6.0 * h) + V / (12.0 * l * h));
    CAPTURE(c.h, c.l, c.s, c.B);
    CHECK(rel(model_flops_per_step(m, p), expected) < 1e-12);
    const Workload w = build_workload(m, p);
    CHECK(rel(w.model_flops_per_step, expected) < 1e-12);
    CHECK(w.tokens_per_step == B * s);
  }
}

TEST_CASE("full recompute HFU FLOPs equal Narayanan's 96*B*s*l*h^2*(1 + s/(6h) + V/(16lh))", "[model][flops]") {
  const ModelSpec m = plain_gpt(12288, 96, 96, 51200, 2048);
  ParallelPlan p = plan(8, 8, 8, 1, 1536, 2048);
  p.recompute_granularity = RecomputeGranularity::full;
  const double h = 12288, s = 2048, l = 96, V = 51200, B = 1536;
  const Workload w = build_workload(m, p);
  CHECK(rel(w.hardware_flops_per_step, 96.0 * B * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h))) < 1e-12);
  // Selective recompute adds only the attention core forward: 4*B*s^2*h per layer.
  p.recompute_granularity = RecomputeGranularity::selective;
  const Workload ws = build_workload(m, p);
  CHECK(rel(ws.hardware_flops_per_step - ws.model_flops_per_step, 4.0 * B * s * s * h * l) < 1e-12);
  p.recompute_granularity = RecomputeGranularity::none;
  CHECK(build_workload(m, p).hardware_flops_per_step == build_workload(m, p).model_flops_per_step);
}

TEST_CASE("per-device matmul FLOPs times devices and micro-batches give the model FLOPs", "[model][flops]") {
  // GQA + SwiGLU + rotary with TP 4, CP 2, DP 2; vocabulary a multiple of 128 x TP so
  // Megatron's padding does not change the count. MoE (Mixtral) with EP 2 as well.
  for (ModelSpec m : {llama(4096, 8, 32, 8, 11008, 32768), mixtral_8x7b()}) {
    m.num_layers = 4;
    m.vocab_size = 32768;
    ParallelPlan p = plan(4, 1, 2, 2, 16, 4096);
    p.context_parallel_size = 2;
    p.sequence_parallel = true;
    if (m.is_moe()) p.expert_model_parallel_size = 2;
    const Workload w = build_workload(m, p);
    double per_device = 0;
    for (int l = 0; l < m.num_layers; ++l)
      for (const auto& op : w.layer_types[w.layer_type_of[l]].ops)
        if (op.op_class != OpClass::memory_bound) per_device += op.forward_flops + op.backward_flops;
    for (const auto& op : w.head.ops)
      if (op.op_class == OpClass::gemm) per_device += op.forward_flops + op.backward_flops;
    const double devices_per_replica = 4 * 2;  // TP x CP share one micro-batch
    const double replicas_times_microbatches = 2 * p.num_microbatches();
    CAPTURE(m.name);
    CHECK(rel(per_device * devices_per_replica * replicas_times_microbatches, w.model_flops_per_step) < 1e-12);
  }
}

TEST_CASE("Korthikanti Table 2: activation bytes per layer in all five cases", "[model][activations]") {
  for (const auto& shape : kShapes) {
    ModelSpec m = plain_gpt(shape.h, shape.layers, shape.a, 51200, 2048);
    ParallelPlan p = plan(8, 1, 1, 1, 1, 2048);
    p.use_flash_attn = false;
    const double s = 2048, b = 1, h = shape.h, a = shape.a, t = 8;
    const double sbh = s * b * h;
    CAPTURE(shape.name);

    ParallelPlan none = plan(1, 1, 1, 1, 1, 2048);
    none.use_flash_attn = false;
    CHECK(rel(activation_bytes_per_layer(m, none), sbh * (34 + 5 * a * s / h)) < 1e-12);

    ParallelPlan tp = p;
    CHECK(rel(activation_bytes_per_layer(m, tp), sbh * (10 + 24 / t + 5 * a * s / (h * t))) < 1e-12);

    ParallelPlan tp_sp = p;
    tp_sp.sequence_parallel = true;
    CHECK(rel(activation_bytes_per_layer(m, tp_sp), sbh * (34 + 5 * a * s / h) / t) < 1e-12);

    ParallelPlan tp_sel = p;
    tp_sel.recompute_granularity = RecomputeGranularity::selective;
    CHECK(rel(activation_bytes_per_layer(m, tp_sel), sbh * (10 + 24 / t)) < 1e-12);

    ParallelPlan tp_sp_sel = tp_sp;
    tp_sp_sel.recompute_granularity = RecomputeGranularity::selective;
    CHECK(rel(activation_bytes_per_layer(m, tp_sp_sel), sbh * 34 / t) < 1e-12);

    // Full recompute keeps the layer input, 2sbh (/t with SP).
    ParallelPlan full = tp_sp;
    full.recompute_granularity = RecomputeGranularity::full;
    CHECK(rel(activation_bytes_per_layer(m, full), 2 * sbh / t) < 1e-12);
  }
}

TEST_CASE("flash attention keeps no s x s scores: only Q, K, V and the fp32 log-sum-exp", "[model][activations]") {
  const ModelSpec m = plain_gpt(12288, 96, 96, 51200, 2048);
  ParallelPlan p = plan(8, 1, 1, 1, 1, 2048);
  p.sequence_parallel = true;
  p.use_flash_attn = true;
  const double s = 2048, h = 12288, a = 96, t = 8;
  const double flash = activation_bytes_per_layer(m, p);
  CHECK(rel(flash, s * h * 34 / t + 4.0 * a / t * s) < 1e-12);
  p.use_flash_attn = false;
  CHECK(activation_bytes_per_layer(m, p) > flash * 2);
}

TEST_CASE("ops flagged for selective recompute are exactly the s x s softmax, mask and dropout output",
          "[model][activations]") {
  ModelSpec m = plain_gpt(4096, 4, 32, 51200, 2048);
  ParallelPlan p = plan(2, 1, 1, 1, 1, 2048);
  p.use_flash_attn = false;
  const Workload w = build_workload(m, p);
  const LayerWorkload& layer = w.layer_types[0];
  double dropped = 0;
  for (const auto& op : layer.ops)
    if (op.dropped_by_selective_recompute) dropped += op.activation_bytes;
  CHECK(rel(dropped, 5.0 * 32 * 2048.0 * 2048 / 2) < 1e-12);
}

TEST_CASE("GQA keeps K and V kv_heads wide: smaller QKV GEMM and activations than MHA", "[model][gqa]") {
  const ModelSpec gqa = llama(8192, 2, 64, 8, 28672, 32000);
  ModelSpec mha = gqa;
  mha.num_key_value_heads = 64;
  ModelSpec mqa = gqa;
  mqa.num_key_value_heads = 1;
  const ParallelPlan p = plan(1, 1, 1, 1, 1, 4096);
  const auto qkv_n = [&](const ModelSpec& m) { return op_named(build_workload(m, p).layer_types[0], "qkv").gemm_n; };
  CHECK(qkv_n(mha) == 3 * 8192);
  CHECK(qkv_n(gqa) == 8192 + 2 * 8 * 128);
  CHECK(qkv_n(mqa) == 8192 + 2 * 128);
  CHECK(activation_bytes_per_layer(gqa, p) < activation_bytes_per_layer(mha, p));
  CHECK(activation_bytes_per_layer(mqa, p) < activation_bytes_per_layer(gqa, p));
  // Exact difference: K and V, 2 bytes x s x b x (64 - 8) heads x 128 x 2.
  CHECK(rel(activation_bytes_per_layer(mha, p) - activation_bytes_per_layer(gqa, p), 2.0 * 4096 * 56 * 128 * 2) <
        1e-12);
}

TEST_CASE("gated MLP keeps both halves at the activation and has three matrices", "[model][mlp]") {
  ModelSpec gelu = plain_gpt(4096, 2, 32, 51200, 2048);
  gelu.hidden_dropout = gelu.attention_dropout = 0;
  ModelSpec gated = gelu;
  gated.gated_mlp = true;
  const ParallelPlan p = plan(1, 1, 1, 1, 1, 2048);
  const LayerWorkload a = build_workload(gelu, p).layer_types[0];
  const LayerWorkload b = build_workload(gated, p).layer_types[0];
  CHECK(op_named(b, "mlp_gate_up").gemm_n == 2 * op_named(a, "mlp_up").gemm_n);
  CHECK(rel(op_named(b, "mlp_gated_activation").activation_bytes, 2 * op_named(a, "mlp_activation").activation_bytes) <
        1e-12);
  CHECK(b.parameters - a.parameters == 4096.0 * 16384 + 16384);  // one more h x ffn matrix and its bias
}

TEST_CASE("Megatron TP collectives: all-reduces without SP, all-gather/reduce-scatter with SP", "[model][comm]") {
  const ModelSpec m = llama2_7b();
  ParallelPlan p = plan(4, 1, 1, 1, 1, 4096);
  const LayerWorkload no_sp = build_workload(m, p).layer_types[0];
  CHECK(count_comms(no_sp, CollectiveKind::all_reduce, CommGroup::tp, Phase::forward) == 2);
  CHECK(count_comms(no_sp, CollectiveKind::all_reduce, CommGroup::tp, Phase::backward) == 2);
  CHECK(count_comms(no_sp, CollectiveKind::all_gather, CommGroup::tp, Phase::forward) == 0);
  for (const auto& c : no_sp.comms) {
    if (c.phase == Phase::forward) {
      const std::string after = no_sp.ops.at(c.after_op).name;
      CHECK((after == "out_proj" || after == "mlp_down"));
    } else {
      const std::string after = no_sp.ops.at(c.after_op).name;
      CHECK((after == "qkv" || after == "mlp_gate_up"));
    }
    CHECK(c.bytes == 2.0 * 4096 * 4096);
  }
  p.sequence_parallel = true;
  const LayerWorkload sp = build_workload(m, p).layer_types[0];
  CHECK(count_comms(sp, CollectiveKind::all_reduce, CommGroup::tp, Phase::forward) == 0);
  CHECK(count_comms(sp, CollectiveKind::all_gather, CommGroup::tp, Phase::forward) == 2);
  CHECK(count_comms(sp, CollectiveKind::reduce_scatter, CommGroup::tp, Phase::forward) == 2);
  CHECK(count_comms(sp, CollectiveKind::reduce_scatter, CommGroup::tp, Phase::backward) == 2);
  CHECK(count_comms(sp, CollectiveKind::all_gather, CommGroup::tp, Phase::backward) == 4);
  p.tensor_model_parallel_size = 1;
  CHECK(build_workload(m, p).layer_types[0].comms.empty());
}

TEST_CASE("context parallelism exchanges K and V c-1 times and divides the local sequence", "[model][cp]") {
  const ModelSpec m = llama3_70b();
  ParallelPlan p = plan(2, 1, 1, 1, 1, 32768);
  p.sequence_parallel = true;
  p.context_parallel_size = 4;
  const LayerWorkload layer = build_workload(m, p).layer_types[0];
  const double local_kv = 2.0 * (32768 / 4) * (2 * 8 * 128) / 2;  // bytes of local K and V per TP rank
  bool found = false;
  for (const auto& c : layer.comms)
    if (c.group == CommGroup::cp && c.phase == Phase::forward) {
      found = true;
      CHECK(c.kind == CollectiveKind::send_recv);
      CHECK(rel(c.bytes, 3 * local_kv) < 1e-12);
    }
  CHECK(found);
  CHECK(op_named(layer, "qkv").gemm_m == 32768 / 4);
  ParallelPlan no_cp = p;
  no_cp.context_parallel_size = 1;
  no_cp.seq_length = 32768 / 4;
  CHECK(rel(activation_bytes_per_layer(m, p), activation_bytes_per_layer(m, no_cp)) < 1e-12);
}

TEST_CASE("MoE layer: router, expert GEMMs on b*s*k*capacity tokens, two EP all-to-alls each way", "[model][moe]") {
  ModelSpec m = mixtral_8x7b();
  m.moe->capacity_factor = 1.25;
  ParallelPlan p = plan(1, 1, 8, 1, 8, 4096);
  p.expert_model_parallel_size = 8;
  const Workload w = build_workload(m, p);
  REQUIRE(w.layer_types.size() == 1);
  const LayerWorkload& layer = w.layer_types[0];
  CHECK(layer.kind == "moe");
  CHECK(op_named(layer, "moe_router").gemm_n == 8);
  CHECK(op_named(layer, "expert_gate_up").gemm_m == static_cast<std::int64_t>(4096 * 2 * 1.25));
  CHECK(count_comms(layer, CollectiveKind::all_to_all, CommGroup::ep, Phase::forward) == 2);
  CHECK(count_comms(layer, CollectiveKind::all_to_all, CommGroup::ep, Phase::backward) == 2);
  // One expert per device under EP 8: expert parameters are 1/8 of the 8 experts.
  CHECK(rel(layer.expert_parameters, 3.0 * 4096 * 14336) < 1e-12);
}

TEST_CASE("EP all-to-all moves tokens x k x h x 2 bytes per rank: dispatch and combine, forward and backward",
          "[model][moe]") {
  // DeepSeek-V2 layer as in the SimuMax B200 runs: 4096 tokens, top-6, h 5120, EP 8, cf 1.
  const ModelSpec m = deepseek_v2(4);
  ParallelPlan p = plan(1, 1, 8, 1, 32, 4096);
  p.expert_model_parallel_size = 8;
  const Workload w = build_workload(m, p);
  const LayerWorkload& layer = w.layer_types[static_cast<std::size_t>(w.layer_type_of[1])];
  REQUIRE(layer.kind == "moe");
  const double expected = 4096.0 * 6 * 5120 * 2;
  int found = 0;
  for (const auto& c : layer.comms)
    if (c.group == CommGroup::ep) {
      CAPTURE(c.name);
      CHECK(c.kind == CollectiveKind::all_to_all);
      CHECK(rel(c.bytes, expected) < 1e-12);
      ++found;
    }
  CHECK(found == 4);
}

TEST_CASE("expert GEMMs are grouped over the E/EP local experts and read every local expert's weight",
          "[model][moe]") {
  const ModelSpec m = deepseek_v2(4);
  ParallelPlan p = plan(1, 1, 8, 1, 32, 4096);
  p.expert_model_parallel_size = 8;
  const Workload w = build_workload(m, p);
  const LayerWorkload& layer = w.layer_types[static_cast<std::size_t>(w.layer_type_of[1])];
  const Op& up = op_named(layer, "expert_gate_up");
  CHECK(up.gemm_groups == 160 / 8);
  CHECK(up.gemm_m == 4096 * 6);
  // Forward bytes: tokens in, 20 experts' 5120 x 3072 weights, tokens out (16-bit).
  const double m_rows = 4096.0 * 6, n = 2.0 * 1536, k = 5120;
  CHECK(rel(up.forward_bytes, 2.0 * (m_rows * k + 20 * k * n + m_rows * n)) < 1e-12);
  CHECK(rel(up.forward_flops, 2.0 * m_rows * n * k) < 1e-12);
  CHECK(op_named(layer, "expert_down").gemm_groups == 20);
  // Dense GEMMs stay single.
  CHECK(op_named(layer, "shared_expert_gate_up").gemm_groups == 1);
}

TEST_CASE("with several local experts the dispatcher sorts tokens by expert and back, with one it does not",
          "[model][moe]") {
  ModelSpec m = mixtral_8x7b();
  ParallelPlan p = plan(1, 1, 8, 1, 8, 4096);
  p.expert_model_parallel_size = 8;  // one expert per device
  const LayerWorkload one = build_workload(m, p).layer_types[0];
  for (const auto& op : one.ops) CHECK(op.name.rfind("moe_sort", 0) == std::string::npos);
  p.expert_model_parallel_size = 2;  // four experts per device
  const LayerWorkload four = build_workload(m, p).layer_types[0];
  const Op& sort = op_named(four, "moe_sort_by_local_expert");
  const Op& back = op_named(four, "moe_sort_back_by_source_rank");
  // One read and one write of the routed tokens (b*s*k x h, 16-bit), forward and backward.
  const double routed = 4096.0 * 2 * 4096 * 2;
  CHECK(rel(sort.forward_bytes, 2 * routed) < 1e-12);
  CHECK(rel(back.backward_bytes, 2 * routed) < 1e-12);
  // The backward dispatch all-to-all runs after the sort's backward, not before it.
  int sort_index = -1;
  for (int i = 0; i < static_cast<int>(four.ops.size()); ++i)
    if (four.ops[static_cast<std::size_t>(i)].name == "moe_sort_by_local_expert") sort_index = i;
  for (const auto& c : four.comms)
    if (c.name == "ep_all_to_all_dispatch_backward") CHECK(c.after_op == sort_index);
}

TEST_CASE("routing and the load-balancing loss are counted as fp32 passes over tokens x experts", "[model][moe]") {
  const ModelSpec m = deepseek_v2(4);
  ParallelPlan p = plan(1, 1, 8, 1, 32, 4096);
  p.expert_model_parallel_size = 8;
  const Workload w = build_workload(m, p);
  const LayerWorkload& layer = w.layer_types[static_cast<std::size_t>(w.layer_type_of[1])];
  const Op& aux = op_named(layer, "moe_aux_loss");
  CHECK(rel(aux.forward_bytes, 5.0 * 4096 * 160) < 1e-12);  // fp32 probs + bool map
  CHECK(aux.kernels > 1);
  CHECK(op_named(layer, "moe_topk").forward_bytes >= 4.0 * 4096 * 160);
}

TEST_CASE("MLA rotary rotates only the rope part: heads x 64 of Q and one shared 64-wide key", "[model][mla]") {
  ParallelPlan p = plan(2, 1, 4, 1, 32, 4096);
  const Workload w = build_workload(deepseek_v2(4), p);
  const Op& rope = op_named(w.layer_types[0], "mla_rope_qkv");
  const double elements = 4096.0 * (128.0 * 64 / 2 + 64);
  CHECK(rel(rope.forward_flops, 6.0 * elements) < 1e-12);
  // Its bytes also assemble K and V at their head dims (mla_dispatch_test.cpp).
  CHECK(rope.forward_bytes > 2.0 * 4096 * 64 * (192 + 128));
}

TEST_CASE("GEMM weight-gradient FLOPs are half of backward (zero-bubble W)", "[model][flops]") {
  const Workload w = build_workload(llama2_7b(), plan(2, 1, 1, 1, 1, 4096));
  for (const auto& op : w.layer_types[0].ops)
    if (op.op_class == OpClass::gemm) {
      CHECK(op.backward_weight_flops == op.backward_flops / 2);
      CHECK(op.backward_flops == 2 * op.forward_flops);
      CHECK(op.forward_bytes > 0);
    }
  for (const auto& op : w.layer_types[0].ops)
    if (op.op_class == OpClass::memory_bound) CHECK(op.forward_bytes > 0);
}

TEST_CASE("LM head shards the padded vocabulary over TP and keeps fp32 logits", "[model][head]") {
  const ModelSpec m = llama3_70b();
  const ParallelPlan p = plan(8, 1, 1, 1, 1, 4096);
  const Workload w = build_workload(m, p);
  CHECK(w.padded_vocab_size == 129024);  // 128256 rounded up to a multiple of 128 x 8
  CHECK(op_named(w.head, "lm_head").gemm_n == 129024 / 8);
  CHECK(rel(op_named(w.head, "cross_entropy").activation_bytes, 4.0 * 4096 * 129024 / 8) < 1e-12);
}

TEST_CASE("tied embeddings: the head holds no copy with one stage, its own copy with PP > 1", "[model][tied]") {
  ModelSpec m = llama2_7b();
  m.tie_word_embeddings = true;
  const Workload one = build_workload(m, plan(1, 1, 1, 1, 1, 4096));
  CHECK(one.head.parameters == 4096);  // final RMSNorm only
  const Workload two = build_workload(m, plan(1, 2, 1, 1, 1, 4096));
  CHECK(two.head.parameters == 4096 + 32000.0 * 4096);
}

TEST_CASE("every collective is placed after an existing op and moves a positive number of bytes", "[model][comm]") {
  ModelSpec ds = deepseek_v2(3);
  ParallelPlan p = plan(2, 1, 4, 1, 8, 8192);
  p.sequence_parallel = true;
  p.context_parallel_size = 2;
  p.expert_model_parallel_size = 4;
  for (const ModelSpec& m : {ds, mixtral_8x7b(), gpt3_175b()}) {
    const Workload w = build_workload(m, p);
    std::vector<const LayerWorkload*> layers{&w.embedding, &w.head};
    for (const auto& l : w.layer_types) layers.push_back(&l);
    for (const LayerWorkload* layer : layers) {
      CAPTURE(m.name, layer->kind);
      CHECK(layer->parameters > 0);
      for (const auto& c : layer->comms) {
        CAPTURE(c.name);
        CHECK(c.after_op >= 0);
        CHECK(c.after_op < static_cast<int>(layer->ops.size()));
        CHECK(c.bytes > 0);
      }
    }
  }
}

TEST_CASE("MLA (DeepSeek-V2) layers: latent projections replace QKV, first layer dense", "[model][mla]") {
  const ModelSpec m = deepseek_v2(4);
  const Workload w = build_workload(m, plan(1, 1, 1, 1, 1, 4096));
  REQUIRE(w.layer_types.size() == 2);
  CHECK(w.layer_types[0].kind == "dense");
  CHECK(w.layer_types[1].kind == "moe");
  CHECK(w.layer_type_of == std::vector<int>{0, 1, 1, 1});
  CHECK(op_named(w.layer_types[0], "kv_up_proj").gemm_k == 512);
  CHECK(op_named(w.layer_types[0], "q_up_proj").gemm_n == 128 * 192);
}

TEST_CASE("unvalidated impossible inputs raise SimError instead of producing numbers", "[model][errors]") {
  ModelSpec m = llama2_7b();
  m.hidden_size = 0;
  CHECK_THROWS_AS(build_workload(m, plan(1, 1, 1, 1, 1, 4096)), SimError);
  CHECK_THROWS_WITH(build_workload(llama2_7b(), plan(1, 1, 1, 0, 1, 4096)), Catch::Contains("non-positive"));
}

TEST_CASE("attention without flash kernels: score-matrix passes move 2+4+5+2 bytes per element forward, 4+6+5+4 back",
          "[model][attention]") {
  // Megatron CoreAttention 2021-2022: baddbmm writes the scores, the fused scale-mask-softmax
  // reads and writes them, dropout adds a 1-byte mask, the bmm with V reads them.
  const ModelSpec m = plain_gpt(4096, 2, 32, 51200, 2048);
  ParallelPlan p = plan(2, 1, 1, 4, 4, 2048);
  p.use_flash_attn = false;
  const LayerWorkload layer = build_workload(m, p).layer_types[0];
  const double b = 4, heads = 32 / 2, s = 2048, d = 128;
  const double scores = b * heads * s * s;
  const double qk_bytes = 2.0 * b * s * 2 * 4096 / 2;  // Q and K, 16 bit, sharded by TP
  const Op& score = op_named(layer, "attention_scores");
  CHECK(rel(score.forward_bytes, 2 * scores + qk_bytes) < 1e-12);
  CHECK(rel(score.backward_bytes, 4 * scores + 2 * qk_bytes) < 1e-12);
  const Op& softmax = op_named(layer, "attention_mask_softmax");
  CHECK(rel(softmax.forward_bytes, 4 * scores) < 1e-12);
  CHECK(rel(softmax.backward_bytes, 6 * scores) < 1e-12);
  CHECK(softmax.kernels == 1);
  const Op& drop = op_named(layer, "attention_dropout");
  CHECK(rel(drop.forward_bytes, 5 * scores) < 1e-12);
  CHECK(rel(drop.backward_bytes, 5 * scores) < 1e-12);
  // The dropout is an elementwise kernel, not one of the measured eager passes (cost_model.cpp).
  CHECK_FALSE(drop.score_matrix);
  int passes = 0;
  for (const auto& op : layer.ops) passes += op.score_matrix ? 1 : 0;
  CHECK(passes == 3);
  // The two bmm are batched GEMMs over the b x heads/t pairs: s x s x d and s x d x s.
  CHECK(score.gemm_groups == 64);
  CHECK(score.gemm_m == 64 * 2048);
  CHECK(score.gemm_n == 2048);
  CHECK(score.gemm_k == 128);
  const Op& pv = op_named(layer, "attention_over_v");
  CHECK(pv.gemm_groups == 64);
  CHECK(pv.gemm_n == 128);
  CHECK(pv.gemm_k == 2048);
  CHECK(rel(pv.forward_flops, 2 * b * heads * s * s * d) < 1e-12);
}

TEST_CASE("beyond 2048 keys Megatron's softmax runs unfused in fp32: 36 / 40 bytes per element in 5 kernels",
          "[model][attention]") {
  const ModelSpec m = plain_gpt(4096, 2, 32, 51200, 4096);
  ParallelPlan p = plan(2, 1, 1, 1, 1, 4096);
  p.use_flash_attn = false;
  const LayerWorkload layer = build_workload(m, p).layer_types[0];
  const double scores = 1.0 * 16 * 4096.0 * 4096;
  const Op& softmax = op_named(layer, "attention_mask_softmax_unfused");
  CHECK(rel(softmax.forward_bytes, 36 * scores) < 1e-12);
  CHECK(rel(softmax.backward_bytes, 40 * scores) < 1e-12);
  CHECK(softmax.kernels == 5);
  CHECK(rel(softmax.activation_bytes, 4 * scores) < 1e-12);  // the fp32 softmax output
  CHECK(softmax.dropped_by_selective_recompute);
  for (const auto& op : layer.ops) CHECK(op.name != "attention_mask_softmax");
}
