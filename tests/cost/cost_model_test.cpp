#include "trainsim/cost/cost_model.hpp"

#include <catch2/catch.hpp>

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

TEST_CASE("a GEMM whose n or k is not a multiple of 64 pays the misalignment factor", "[cost][compute]") {
  const DeviceSpec d = test::h100_dgx().device;
  CHECK(gemm_efficiency(d, 16384, 10922, 4096) ==
        Approx(0.68 * gemm_efficiency_for_flops(d.gemm, 2.0 * 16384 * 10922 * 4096)));
  CHECK(gemm_efficiency(d, 16384, 10944, 4096) ==
        Approx(gemm_efficiency_for_flops(d.gemm, 2.0 * 16384 * 10944 * 4096)));
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
  const double cast_s = 3.0 * 8192 * 8192 / (d.hbm_bandwidth * d.memory_bound_efficiency);
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

TEST_CASE("the plan can force a collective algorithm; auto picks the fastest candidate", "[cost][collective]") {
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
