#include "trainsim/cost/cost_model.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <utility>

#include "test_hardware.hpp"

using namespace trainsim;

namespace {
Op gemm(std::int64_t m, std::int64_t n, std::int64_t k) {
  Op op;
  op.name = "gemm";
  op.op_class = OpClass::gemm;
  op.gemm_m = m, op.gemm_n = n, op.gemm_k = k;
  op.forward_flops = 2.0 * m * n * k;
  op.backward_flops = 2 * op.forward_flops;
  op.backward_weight_flops = op.forward_flops;
  op.forward_bytes = 2.0 * (m * k + k * n + m * n);
  op.backward_bytes = 2 * op.forward_bytes;
  return op;
}
}  // namespace

TEST_CASE("GEMM time grows with size and efficiency never exceeds the large-GEMM value", "[cost][compute]") {
  const HardwareSpec h = test::a100_dgx();
  const CostModel model(h, ParallelPlan{}, 8);
  double previous_time = 0, previous_eff = 0;
  for (std::int64_t s = 256; s <= 16384; s *= 2) {
    const Op op = gemm(s, s, s);
    const double t = model.forward_s(op);
    const double eff = op.forward_flops / t / h.device.peak_flops_bf16;
    CHECK(t > previous_time);
    CHECK(eff >= previous_eff * (1 - 1e-12));
    CHECK(eff <= h.device.gemm.large);
    previous_time = t, previous_eff = eff;
  }
  // The A100 curve against the cuBLAS chart: 1024^3 ~88, 4096^3 ~258 TFLOPS (+-10%).
  CHECK(gemm_efficiency(h.device, 1024, 1024, 1024) * 312 == Approx(88).epsilon(0.12));
  CHECK(gemm_efficiency(h.device, 4096, 4096, 4096) * 312 == Approx(258).epsilon(0.10));
}

TEST_CASE("a GEMM whose n or k is not a multiple of 8 pays the misalignment factor, a multiple of 32 does not", "[cost][compute]") {
  const DeviceSpec d = test::h100_dgx().device;
  CHECK(gemm_efficiency(d, 16384, 10922, 4096) ==
        Approx(0.68 * gemm_efficiency_for_flops(d.gemm, 2.0 * 16384 * 10922 * 4096)));
  CHECK(gemm_efficiency(d, 16384, 10944, 4096) ==
        Approx(gemm_efficiency_for_flops(d.gemm, 2.0 * 16384 * 10944 * 4096)));
  // [MLE-perf]'s 10848 (a multiple of 32, not of 64) ran with 10944: no factor.
  CHECK(gemm_efficiency(d, 16384, 10848, 4096) ==
        Approx(gemm_efficiency_for_flops(d.gemm, 2.0 * 16384 * 10848 * 4096)));
}

TEST_CASE("a grouped GEMM runs at the efficiency of one group's shape: more experts, same FLOPs, more time",
          "[cost][compute][moe]") {
  const HardwareSpec h = test::h100_dgx();
  const CostModel model(h, ParallelPlan{}, 8);
  // 24576 token copies x 3072 x 5120, as one GEMM and as grouped GEMMs over 4, 20, 80 experts.
  Op op = gemm(24576, 3072, 5120);
  double previous = model.forward_s(op);
  for (int groups : {4, 20, 80}) {
    op.gemm_groups = groups;
    const double t = model.forward_s(op);
    CHECK(t > previous);
    CHECK(model.backward_s(op) > 1.9 * t);
    // Exactly the time of one expert's GEMM at its own efficiency, times the experts.
    const double per_expert = 2.0 * 24576 / groups * 3072 * 5120;
    const double efficiency = gemm_efficiency(h.device, 24576.0 / groups, 3072, 5120);
    CHECK(t == Approx(groups * per_expert / (h.device.peak_flops_bf16 * efficiency)).epsilon(1e-9));
    previous = t;
  }
}

TEST_CASE("memory-bound op time equals bytes / (HBM bandwidth x efficiency)", "[cost][compute]") {
  const HardwareSpec h = test::h100_dgx();
  const CostModel model(h, ParallelPlan{}, 8);
  Op norm;
  norm.name = "input_norm";
  norm.op_class = OpClass::memory_bound;
  norm.forward_bytes = 1e9;
  norm.forward_flops = 5e8;
  norm.backward_bytes = 2e9;
  const double bw = h.device.hbm_bandwidth * h.device.memory_bound_efficiency;
  CHECK(model.forward_s(norm) == Approx(1e9 / bw).epsilon(1e-12));
  CHECK(model.backward_s(norm) == Approx(2e9 / bw).epsilon(1e-12));
  CHECK(model.memory_bound_s(3e9) == Approx(3e9 / bw).epsilon(1e-12));
  // A tiny kernel costs at least its launch.
  norm.forward_bytes = 10;
  norm.forward_flops = 0;
  CHECK(model.forward_s(norm) == Approx(h.device.kernel_launch_s));
}

TEST_CASE("a GEMM with few FLOPs per byte is priced by HBM bandwidth", "[cost][compute]") {
  const HardwareSpec h = test::a100_dgx();
  Op op = gemm(8, 8192, 8192);  // a skinny decode-like GEMM
  const double memory = op.forward_bytes / (h.device.hbm_bandwidth * h.device.memory_bound_efficiency);
  CHECK(op_forward_s(op, h.device, Precision::bf16) == Approx(memory));
}

TEST_CASE("FP8 GEMMs use the FP8 peak at their relative efficiency plus the input cast, attention stays at 16 bit",
          "[cost][compute]") {
  DeviceSpec d = test::h100_dgx().device;
  d.gemm.fp8_relative_efficiency = 0.883;
  const Op op = gemm(8192, 8192, 8192);
  // Delayed scaling casts the input and (by default at every forward) the weight: 4 bytes per
  // element each (fp8_recipe_test.cpp has the recipes).
  const double cast_s = (4.0 + 4.0) * 8192 * 8192 / (d.hbm_bandwidth * d.memory_bound_efficiency);
  CHECK(op_forward_s(op, d, Precision::fp8) - cast_s ==
        Approx(op_forward_s(op, d, Precision::bf16) * 989.0 / (1979.0 * 0.883)).epsilon(1e-9));
  Op attention;
  attention.name = "attention_core";
  attention.op_class = OpClass::attention;
  attention.forward_flops = 1e13;
  // Causal flash attention does half the model-count FLOPs at the 16-bit peak.
  CHECK(op_forward_s(attention, d, Precision::fp8) == Approx(0.5e13 / (989e12 * d.attention_efficiency)));
}

TEST_CASE("the weight-gradient part of backward is no longer than backward", "[cost][compute]") {
  const CostModel model(test::ascend_910b3(), ParallelPlan{}, 8);
  const Op op = gemm(4096, 4096, 4096);
  CHECK(model.backward_weight_s(op) > 0);
  CHECK(model.backward_weight_s(op) == Approx(model.backward_s(op) / 2));
  CHECK(model.backward_s(op) == Approx(2 * model.forward_s(op)));
}

TEST_CASE("pipeline send/recv stays in the server or crosses NICs depending on where neighbours sit", "[cost]") {
  const HardwareSpec h = test::a100_dgx();
  ParallelPlan inside;
  inside.tensor_model_parallel_size = 2;
  inside.pipeline_model_parallel_size = 4;  // 8 devices: pp stride 2, all in one server
  const CostModel one(h, inside, 8);
  CHECK_FALSE(one.p2p_crosses_nodes());
  CHECK(one.p2p_s(1e9) == Approx(1e9 / intra_node_bandwidth(h) + h.node.link_latency_s));
  ParallelPlan across;
  across.tensor_model_parallel_size = 8;
  across.pipeline_model_parallel_size = 4;  // 32 devices: each stage is a server
  const CostModel four(h, across, 32);
  CHECK(four.p2p_crosses_nodes());
  CHECK(four.p2p_s(1e9) == Approx(1e9 / nic_bandwidth(h) + inter_node_latency_s(h)));
}

TEST_CASE("the plan can force a collective algorithm, auto picks the fastest candidate", "[cost][collective]") {
  const HardwareSpec h = test::a100_dgx();
  ParallelPlan plan;
  plan.tensor_model_parallel_size = 8;
  plan.data_parallel_size = 64;  // one rank per server: DP crosses 64 servers
  const double bytes = 1e9;
  const double automatic = CostModel(h, plan, 512).collective_s(CollectiveKind::all_reduce, CommGroup::dp, bytes);
  plan.collective_algorithm = "ring";
  const double ring = CostModel(h, plan, 512).collective_s(CollectiveKind::all_reduce, CommGroup::dp, bytes);
  plan.collective_algorithm = "tree";
  const double tree = CostModel(h, plan, 512).collective_s(CollectiveKind::all_reduce, CommGroup::dp, bytes);
  CHECK(ring != tree);
  CHECK(automatic == Approx(std::min(ring, tree)));
  CHECK(collective_options(plan).algorithm == CollectiveAlgorithm::double_binary_tree);
}

namespace {
// A GPT layer with h = 4096 and `heads` heads, TP 2, micro-batch 4, s = 2048, no flash.
LayerWorkload eager_layer(int heads, double attention_dropout = 0.0) {
  ModelSpec m;
  m.name = "gpt";
  m.hidden_size = 4096;
  m.num_layers = 2;
  m.num_attention_heads = heads;
  m.num_key_value_heads = heads;
  m.head_dim = 4096 / heads;
  m.intermediate_size = 4 * 4096;
  m.vocab_size = 51200;
  m.max_position_embeddings = 2048;
  m.position_embedding = PositionEmbedding::learned;
  m.norm = "layernorm";
  m.attention_dropout = attention_dropout;
  ParallelPlan p;
  p.tensor_model_parallel_size = 2;
  p.micro_batch_size = 4;
  p.global_batch_size = 4;
  p.seq_length = 2048;
  p.use_flash_attn = false;
  return build_workload(m, p).layer_types[0];
}
}  // namespace

TEST_CASE("attention without flash kernels: batched GEMMs at the GEMM curve, full s x s, passes at the eager rate",
          "[cost][compute][attention]") {
  HardwareSpec h = test::a100_dgx();
  h.device.eager_attention_memory_efficiency = 0.5;
  h.device.sustained_compute_fraction = 0.9;
  const LayerWorkload layer = eager_layer(32);
  const double b = 4, heads = 16, s = 2048, d = 128, scores = b * heads * s * s;
  const double bw = h.device.hbm_bandwidth * 0.5;
  for (const auto& op : layer.ops) {
    if (op.name == "attention_mask_softmax") {
      CHECK(op_forward_s(op, h.device, Precision::bf16) == Approx(4 * scores / bw).epsilon(1e-12));
      CHECK(op_backward_s(op, h.device, Precision::bf16) == Approx(6 * scores / bw).epsilon(1e-12));
    }
    if (op.name == "attention_scores") {
      // cuBLAS computes every score, masked half included, at the efficiency of the whole batch.
      const double flops = 2 * b * heads * s * s * d;
      const double compute =
          flops / (h.device.peak_flops_bf16 * gemm_efficiency_for_flops(h.device.gemm, flops) * 0.9);
      const OpTiming t = op_forward_timing(op, h.device, Precision::bf16);
      CHECK(t.compute_s == Approx(compute).epsilon(1e-12));
      CHECK(t.memory_s == Approx(op.forward_bytes / bw).epsilon(1e-12));
      CHECK(t.total_s() == Approx(std::max(compute, op.forward_bytes / bw)).epsilon(1e-12));
    }
  }
  // The attention dropout moves the same matrix but at the elementwise rate: the eager rate's
  // measurement (FlashAttention's PyTorch baseline) ran at dropout_p 0, with no dropout kernel.
  int dropouts = 0;
  for (const auto& op : eager_layer(32, 0.1).ops)
    if (op.name == "attention_dropout") {
      ++dropouts;
      const double elementwise = h.device.hbm_bandwidth * h.device.memory_bound_efficiency;
      CHECK(op_forward_s(op, h.device, Precision::bf16) == Approx(5 * scores / elementwise).epsilon(1e-12));
      CHECK(op_backward_s(op, h.device, Precision::bf16) == Approx(5 * scores / elementwise).epsilon(1e-12));
    }
  CHECK(dropouts == 1);
  // Without a measured eager rate the passes fall back to the elementwise rate.
  h.device.eager_attention_memory_efficiency = 0;
  for (const auto& op : layer.ops)
    if (op.name == "attention_mask_softmax")
      CHECK(op_forward_s(op, h.device, Precision::bf16) ==
            Approx(4 * scores / (h.device.hbm_bandwidth * h.device.memory_bound_efficiency)).epsilon(1e-12));
}

namespace {
// A GPT layer (h = 2048, micro-batch 2, s = 1024) with the given norm on the given framework.
LayerWorkload norm_layer(Framework framework, const std::string& norm, bool compiled = false) {
  ModelSpec m;
  m.name = "gpt";
  m.hidden_size = 2048;
  m.num_layers = 2;
  m.num_attention_heads = 16;
  m.num_key_value_heads = 16;
  m.head_dim = 128;
  m.intermediate_size = 4 * 2048;
  m.vocab_size = 51200;
  m.max_position_embeddings = 1024;
  m.norm = norm;
  ParallelPlan p;
  p.framework = framework;
  p.torch_compile = compiled;
  p.micro_batch_size = 2;
  p.global_batch_size = 2;
  p.seq_length = 1024;
  return build_workload(m, p).layer_types[0];
}
}  // namespace

TEST_CASE("a LayerNorm run as PyTorch's own layer_norm moves its bytes at the device's eager forward / backward "
          "rates, fused norms, RMSNorm and devices without a measurement at memory_bound_efficiency",
          "[cost][compute][norm]") {
  HardwareSpec h = test::a100_dgx();
  h.device.eager_layer_norm_forward_efficiency = 0.47;
  h.device.eager_layer_norm_backward_efficiency = 0.24;
  const double tokens = 2 * 1024, hidden = 2048;
  const auto norm_of = [](const LayerWorkload& layer) {
    for (const auto& op : layer.ops)
      if (op.name == "input_norm") return op;
    FAIL("no input_norm");
    return Op{};
  };
  // Forward reads x and writes y, backward reads x and dy and writes dx: 2 and 3 16-bit tensors.
  const Op eager = norm_of(norm_layer(Framework::fsdp, "layernorm"));
  REQUIRE(eager.eager_layer_norm);
  CHECK(op_forward_timing(eager, h.device, Precision::bf16).memory_s ==
        Approx(2 * 2 * tokens * hidden / (h.device.hbm_bandwidth * 0.47)).epsilon(1e-12));
  CHECK(op_backward_timing(eager, h.device, Precision::bf16).memory_s ==
        Approx(3 * 2 * tokens * hidden / (h.device.hbm_bandwidth * 0.24)).epsilon(1e-12));
  const double elementwise = h.device.hbm_bandwidth * h.device.memory_bound_efficiency;
  for (const Op& op : {norm_of(norm_layer(Framework::megatron_core, "layernorm")),
                       norm_of(norm_layer(Framework::megatron_core, "rmsnorm")),
                       norm_of(norm_layer(Framework::fsdp, "rmsnorm", true))}) {
    CHECK_FALSE(op.eager_layer_norm);
    CHECK(op_backward_timing(op, h.device, Precision::bf16).memory_s ==
          Approx(3 * 2 * tokens * hidden / elementwise).epsilon(1e-12));
  }
  // torchtitan's eager RMSNorm (its op chain, workload.cpp): 36 bytes an element forward, 92 in
  // backward, 8 kernels, at the elementwise rate; compiled, the fused norm's 4 and 6 (above).
  const Op rms = norm_of(norm_layer(Framework::fsdp, "rmsnorm"));
  CHECK_FALSE(rms.eager_layer_norm);
  CHECK(rms.kernels == 8);
  CHECK(op_forward_timing(rms, h.device, Precision::bf16).memory_s ==
        Approx(36 * tokens * hidden / elementwise).epsilon(1e-12));
  CHECK(op_backward_timing(rms, h.device, Precision::bf16).memory_s ==
        Approx(92 * tokens * hidden / elementwise).epsilon(1e-12));
  CHECK(rms.activation_bytes == 6 * tokens * hidden);  // the fp32 upcast and the 16-bit output
  // 0: the device has no measurement of the eager kernel, the elementwise rate stands.
  h.device.eager_layer_norm_forward_efficiency = 0;
  h.device.eager_layer_norm_backward_efficiency = 0;
  CHECK(op_backward_timing(eager, h.device, Precision::bf16).memory_s ==
        Approx(3 * 2 * tokens * hidden / elementwise).epsilon(1e-12));
}

TEST_CASE("doubling the heads at a fixed hidden size adds exactly the s x s passes' time (22 bytes per element)",
          "[cost][compute][attention]") {
  HardwareSpec h = test::a100_dgx();
  h.device.eager_attention_memory_efficiency = 0.5;
  const double bw = h.device.hbm_bandwidth * 0.5;
  const auto memory_time = [&](const LayerWorkload& layer) {
    double sum = 0;
    for (const auto& op : layer.ops) {
      if (!op.score_matrix) continue;
      sum += op_forward_timing(op, h.device, Precision::bf16).memory_s;
      sum += op_backward_timing(op, h.device, Precision::bf16).memory_s;
    }
    return sum;
  };
  // No attention dropout in this model: QK^T 2 + 4, softmax 4 + 6, PV 2 + 4 bytes per element.
  const double t32 = memory_time(eager_layer(32));
  const double t64 = memory_time(eager_layer(64));
  const double added_scores = 4.0 * (64 - 32) / 2 * 2048.0 * 2048;
  CHECK(t64 - t32 == Approx(22 * added_scores / bw).epsilon(1e-9));
  // The matmul FLOPs do not change; the layer's forward time grows.
  const auto matmul_flops_and_time = [&](const LayerWorkload& layer) {
    double flops = 0, time = 0;
    for (const auto& op : layer.ops) {
      if (op.op_class != OpClass::memory_bound) flops += op.forward_flops;
      time += op_forward_s(op, h.device, Precision::bf16);
    }
    return std::pair<double, double>{flops, time};
  };
  const auto [f32, s32] = matmul_flops_and_time(eager_layer(32));
  const auto [f64, s64] = matmul_flops_and_time(eager_layer(64));
  CHECK(f64 == Approx(f32).epsilon(1e-12));
  CHECK(s64 > s32);
}

TEST_CASE("GEMM efficiency grows with M toward the large-shape value", "[cost][compute]") {
  const DeviceSpec d = test::a100_dgx().device;
  double previous = 0;
  for (double m : {64.0, 256.0, 1024.0, 4096.0, 16384.0, 65536.0}) {
    const double e = gemm_efficiency(d, m, 4608, 12288);
    CHECK(e > previous);
    CHECK(e < d.gemm.large);
    previous = e;
  }
  CHECK(gemm_efficiency(d, 1e7, 4608, 12288) == Approx(d.gemm.large).epsilon(1e-3));
}
