// The alignment rule of cost_model.cpp: tensor-core GEMM operands that are not a multiple of 64
// 16-bit elements (128 bytes, A100's requirement in NVIDIA's Matrix Multiplication Background guide,
// "Tensor Core Requirements") pay the device's misaligned_factor, in the linear GEMMs and in the
// batched GEMMs of attention without flash kernels (one item's head dimension and span).
#include <catch2/catch.hpp>

#include "test_hardware.hpp"
#include "trainsim/cost/cost_model.hpp"

using namespace trainsim;

namespace {

// A test factor, not a measurement: the checks below are exact ratios to it.
constexpr double kFactor = 0.5;

DeviceSpec a100_with_factor() {
  DeviceSpec d = test::a100_dgx().device;
  d.gemm.misaligned_factor = kFactor;
  return d;
}

// The batched QK^T of eager attention for one micro-batch: b x heads items of s x s x head_dim,
// at a fixed FLOP count so that only the alignment can change the time.
Op scores(std::int64_t head_dim) {
  Op op;
  op.name = "attention_scores";
  op.op_class = OpClass::attention;
  op.gemm_groups = 96;
  op.gemm_m = 96LL * 2048;
  op.gemm_n = 2048;
  op.gemm_k = head_dim;
  op.forward_flops = 2.0 * 96 * 2048 * 2048 * 144;
  return op;
}

}  // namespace

TEST_CASE("TP-8 shards of hidden 14400 (1800, 5400, 7200) pay the misalignment factor, of 13824 (1728, 5184, 6912) do not",
          "[cost][compute][alignment]") {
  const DeviceSpec d = a100_with_factor();
  const double m = 2048;  // one micro-batch of 2048 tokens
  for (const auto& [n, k] : {std::pair<double, double>{1800, 14400}, {5400, 14400}, {14400, 7200}}) {
    CHECK(gemm_efficiency(d, m, n, k) == Approx(kFactor * gemm_efficiency_for_flops(d.gemm, 2 * m * n * k)));
  }
  for (const auto& [n, k] : {std::pair<double, double>{1728, 13824}, {5184, 13824}, {13824, 6912}}) {
    CHECK(gemm_efficiency(d, m, n, k) == Approx(gemm_efficiency_for_flops(d.gemm, 2 * m * n * k)));
  }
}

TEST_CASE("eager attention's batched GEMMs at head dimension 144 or 150 run at the factor times the rate at 128",
          "[cost][compute][alignment][attention]") {
  const DeviceSpec d = a100_with_factor();
  const double aligned = op_forward_s(scores(128), d, Precision::bf16);
  CHECK(op_forward_s(scores(144), d, Precision::bf16) == Approx(aligned / kFactor).epsilon(1e-12));
  CHECK(op_forward_s(scores(150), d, Precision::bf16) == Approx(aligned / kFactor).epsilon(1e-12));
  // No factor in the hardware file, no penalty.
  DeviceSpec unmeasured = d;
  unmeasured.gemm.misaligned_factor = 1.0;
  CHECK(op_forward_s(scores(150), unmeasured, Precision::bf16) ==
        Approx(op_forward_s(scores(128), unmeasured, Precision::bf16)).epsilon(1e-12));
}
