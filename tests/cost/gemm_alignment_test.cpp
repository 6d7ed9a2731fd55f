// The alignment rule of cost_model.cpp: tensor-core GEMM operands that are not a multiple of 8
// 16-bit elements (16 bytes) pay the device's misaligned_factor, in the linear GEMMs and in the
// batched GEMMs of attention without flash kernels (one item's head dimension and span). The step
// is where the A100 fp16 sweep of the EleutherAI cookbook puts it (microbenchmarks.md 1c), not at
// the 128 bytes of NVIDIA's guide.
#include <catch2/catch.hpp>

#include <string>

#include "test_hardware.hpp"
#include "trainsim/config/scenario.hpp"
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

TEST_CASE("TP-8 shards of hidden 14400 (1800, 5400, 7200: multiples of 8) pay no misalignment factor, 1802 does",
          "[cost][compute][alignment]") {
  const DeviceSpec d = a100_with_factor();
  const double m = 2048;  // one micro-batch of 2048 tokens
  for (const auto& [n, k] : {std::pair<double, double>{1800, 14400}, {5400, 14400}, {14400, 7200}, {1728, 13824}}) {
    CHECK(gemm_efficiency(d, m, n, k) == Approx(gemm_efficiency_for_flops(d.gemm, 2 * m * n * k)));
  }
  for (const auto& [n, k] : {std::pair<double, double>{1802, 14400}, {14400, 1802}, {5404, 14400}}) {
    CHECK(gemm_efficiency(d, m, n, k) == Approx(kFactor * gemm_efficiency_for_flops(d.gemm, 2 * m * n * k)));
  }
}

TEST_CASE("eager attention's batched GEMMs at head dimension 150 run at the factor times the rate at 128, 144 does not",
          "[cost][compute][alignment][attention]") {
  const DeviceSpec d = a100_with_factor();
  const double aligned = op_forward_s(scores(128), d, Precision::bf16);
  CHECK(op_forward_s(scores(144), d, Precision::bf16) == Approx(aligned).epsilon(1e-12));
  CHECK(op_forward_s(scores(152), d, Precision::bf16) == Approx(aligned).epsilon(1e-12));
  CHECK(op_forward_s(scores(150), d, Precision::bf16) == Approx(aligned / kFactor).epsilon(1e-12));
  // No factor in the hardware file, no penalty.
  DeviceSpec unmeasured = d;
  unmeasured.gemm.misaligned_factor = 1.0;
  CHECK(op_forward_s(scores(150), unmeasured, Precision::bf16) ==
        Approx(op_forward_s(scores(128), unmeasured, Precision::bf16)).epsilon(1e-12));
}

TEST_CASE("A100 files: an fp16 GEMM 2 wider than a multiple of 8 runs at the cookbook sweep's measured ratio",
          "[cost][compute][alignment][calibration]") {
  // EleutherAI cookbook @ 27dff48 sizing/results/gemm_data/mm/ksweep_low/a100.out (microbenchmarks.md
  // 1c): torch.mm 27648 x 4096 by 4096 x N in fp16. N = 386, 388, 390 (not multiples of 8) ran
  // 120.454 / 120.367 / 120.660 TFLOPS, N = 392 (a multiple of 8, same tiles: 4 of 128 wide) 191.066.
  const double measured_390 = 120.660 / 191.066;  // 0.632
  const double measured_386 = 120.454 / 191.066;  // 0.630
  for (const char* file : {"a100-80gb.yaml", "a100-40gb.yaml", "jean-zay-a100.yaml"}) {
    const DeviceSpec d = load_hardware(std::string(TRAINSIM_SOURCE_DIR) + "/hardware/" + file).device;
    INFO(file);
    // The factor is the sweep's: the mean over N = 256..510 of the not-multiple-of-8 points over
    // that of the multiples of 8, each against the tile model: 0.578 / 0.876.
    CHECK(d.gemm.misaligned_factor == Approx(0.578 / 0.876).epsilon(0.01));
    const auto tflops = [&](double n) { return 312.0 * gemm_efficiency(d, 27648, n, 4096, 312e12); };
    // Same tiles and waves, so the model's ratio is the factor times the FLOPs ratio (plus the fixed
    // time's share); the measured ratios at 386 and 390 lie within 5% of it.
    CHECK(tflops(390) / tflops(392) == Approx(measured_390).epsilon(0.05));
    CHECK(tflops(386) / tflops(392) == Approx(measured_386).epsilon(0.05));
    // A multiple of 8 pays nothing (392, 400, 416: multiples of 8, 16, 32, the sweep's one curve);
    // one that is not pays the file's factor.
    DeviceSpec unpenalized = d;
    unpenalized.gemm.misaligned_factor = 1.0;
    for (double n : {392.0, 400.0, 416.0}) {
      CHECK(gemm_efficiency(d, 27648, n, 4096, 312e12) == gemm_efficiency(unpenalized, 27648, n, 4096, 312e12));
    }
    CHECK(gemm_efficiency(d, 27648, 390, 4096, 312e12) ==
          Approx(d.gemm.misaligned_factor * gemm_efficiency(unpenalized, 27648, 390, 4096, 312e12)));
  }
}
