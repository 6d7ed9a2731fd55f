// GEMM time from its shape (sim/cost/gemm_shape.cpp): tile and wave quantization on the
// device's compute units, plus a fixed time per kernel. Closed forms on a device built here;
// the shipped files against the square sweeps of microbenchmarks.md 1b ([calibration]).
#include "trainsim/cost/gemm_shape.hpp"

#include <catch2/catch.hpp>
#include <string>

#include "trainsim/config/scenario.hpp"
#include "trainsim/cost/cost_model.hpp"

using namespace trainsim;

namespace {
// An A100-like device: 108 SMs, cuBLAS's 256x128 as the largest tile, MAMF 0.87, 15 us a kernel.
DeviceSpec a100_like() {
  DeviceSpec d;
  d.peak_flops_bf16 = 312e12;
  d.compute_units = 108;
  d.gemm.large = 0.87;
  d.gemm.tile_m = 256;
  d.gemm.tile_n = 128;
  d.gemm.fixed_latency_s = 15e-6;
  return d;
}

Op gemm(std::int64_t m, std::int64_t n, std::int64_t k) {
  Op op;
  op.name = "gemm";
  op.op_class = OpClass::gemm;
  op.gemm_m = m, op.gemm_n = n, op.gemm_k = k;
  op.forward_flops = 2.0 * m * n * k;
  op.backward_flops = 2 * op.forward_flops;
  return op;
}
}  // namespace

TEST_CASE("a shape that fills every unit with the largest tile runs in one full wave", "[cost][gemm_shape]") {
  // 2304 x 1536 = 9 x 12 tiles of 256 x 128 = 108 tiles on 108 SMs.
  const GemmTiling t = gemm_tiling(108, 256, 128, 2304, 1536, 1);
  CHECK(t.tile_m == 256);
  CHECK(t.tile_n == 128);
  CHECK(t.tiles == 108);
  CHECK(t.waves == 1);
  CHECK(t.utilization == 1.0);
}

TEST_CASE("one row of tiles too many: the best tile of the list, and the wave it leaves part-empty",
          "[cost][gemm_shape]") {
  // 2560 x 1536: 256x128 gives 120 tiles in 2 waves (120/216); 64x64 gives 40 x 24 = 960 tiles in
  // 9 waves (960/972), the best of 256x128 .. 64x64 in both orientations.
  const GemmTiling t = gemm_tiling(108, 256, 128, 2560, 1536, 1);
  CHECK(t.tile_m == 64);
  CHECK(t.tile_n == 64);
  CHECK(t.tiles == 960);
  CHECK(t.waves == 9);
  CHECK(t.utilization == Approx(960.0 / 972.0).epsilon(1e-12));
  // 1024^3 on 108 SMs: at most 256 tiles of 64x64 in 3 waves, 79% of the slots.
  CHECK(gemm_tiling(108, 256, 128, 1024, 1024, 1).utilization == Approx(1024.0 * 1024 / (3 * 108 * 4096.0)));
}

TEST_CASE("a narrow n computes padding: head dim 96 in 64-wide tiles, and a batch shares the waves",
          "[cost][gemm_shape]") {
  // Batched PV of attention without flash kernels: 32 (batch, head) pairs of 2048 x 64. 128x64
  // tiles: 16 x 32 = 512 tiles in 5 waves (512/540), tied with 64x64 (1024 in 10), the larger kept.
  const GemmTiling pv = gemm_tiling(108, 256, 128, 2048, 64, 32);
  CHECK(pv.tile_m == 128);
  CHECK(pv.tile_n == 64);
  CHECK(pv.utilization == Approx(512.0 / 540.0).epsilon(1e-12));
  // n = 96 needs two 64-wide tiles (or one 128): at most 96/128 of each tile is useful. Best:
  // 64x64, 32 x 2 x 32 = 2048 tiles in 19 waves.
  const GemmTiling odd = gemm_tiling(108, 256, 128, 2048, 96, 32);
  CHECK(odd.utilization <= 0.75 + 1e-12);
  CHECK(odd.tiles == 2048);
  CHECK(odd.utilization == Approx(32.0 * 2048 * 96 / (19 * 108 * 4096.0)).epsilon(1e-12));
}

TEST_CASE("GEMM time is the FLOPs at the large efficiency over the utilization, plus the kernel's fixed time",
          "[cost][gemm_shape]") {
  const DeviceSpec d = a100_like();
  const double flops = 2.0 * 1024 * 1024 * 1024;
  const double u = 1024.0 * 1024 / (3 * 108 * 4096.0);
  const double expected = flops / (312e12 * 0.87 * u) + 15e-6;
  CHECK(gemm_shape_time_s(d, 312e12, 1024, 1024, 1024, 1) == Approx(expected).epsilon(1e-12));
  CHECK(gemm_shape_efficiency(d, 312e12, 1024, 1024, 1024, 1) == Approx(flops / (312e12 * expected)).epsilon(1e-12));
  // Large shapes approach `large` and never pass it.
  const double big = gemm_shape_efficiency(d, 312e12, 16384, 16384, 16384, 1);
  CHECK(big <= 0.87);
  CHECK(big > 0.86);
}

TEST_CASE("a micro batch of 8 costs less than 8 of 1: the fixed time is paid once", "[cost][gemm_shape]") {
  const DeviceSpec d = a100_like();
  // GPT-3 XL QKV at sequence 2048: M = mbs x 2048, N = 3h = 6144, K = h = 2048.
  const double one = gemm_shape_time_s(d, 312e12, 2048, 6144, 2048, 1);
  const double eight = gemm_shape_time_s(d, 312e12, 8 * 2048, 6144, 2048, 1);
  CHECK(eight < 8 * one);
  // The saving is the seven fixed times plus the fuller last wave: 64x64 tiles fill 98.1% of the
  // slots at M = 2048 (3072 tiles in 29 waves), 256x64 99.8% at M = 16384 (6144 in 57).
  const double u1 = gemm_tiling(108, 256, 128, 2048, 6144, 1).utilization;
  const double u8 = gemm_tiling(108, 256, 128, 8 * 2048, 6144, 1).utilization;
  CHECK(u1 == Approx(3072.0 * 4096 / (29 * 108 * 4096.0)).epsilon(1e-12));
  CHECK(u8 == Approx(6144.0 * 16384 / (57 * 108 * 16384.0)).epsilon(1e-12));
  const double flops8 = 2.0 * 8 * 2048 * 6144 * 2048;
  CHECK(8 * one - eight == Approx(7 * 15e-6 + flops8 / (312e12 * 0.87) * (1 / u1 - 1 / u8)).epsilon(1e-9));
}

TEST_CASE("the cost model prices a shaped GEMM from its shape, and keeps the FLOP curve without compute units",
          "[cost][gemm_shape]") {
  DeviceSpec d = a100_like();
  d.gemm.small = 0.1;
  d.gemm.half_flops = 7e9;
  CHECK(gemm_efficiency(d, 1024, 1024, 1024) == Approx(gemm_shape_efficiency(d, 312e12, 1024, 1024, 1024, 1)));
  DeviceSpec curve = d;
  curve.compute_units = 0;
  CHECK(gemm_efficiency(curve, 1024, 1024, 1024) == Approx(gemm_efficiency_for_flops(curve.gemm, 2.0 * 1024 * 1024 * 1024)));
  // Grouped GEMM (MoE experts): each expert is its own kernel at its own shape.
  HardwareSpec h;
  h.device = d;
  h.device.sustained_compute_fraction = 1.0;
  const CostModel model(h, ParallelPlan{}, 8);
  Op op = gemm(8 * 1024, 1024, 1024);
  op.gemm_groups = 8;
  CHECK(model.forward_s(op) == Approx(8 * gemm_shape_time_s(d, 312e12, 1024, 1024, 1024, 1)).epsilon(1e-9));
}

TEST_CASE("the shipped A100 and H100 files against their square GEMM sweeps", "[cost][gemm_shape][calibration]") {
  const std::string dir = TRAINSIM_SOURCE_DIR;
  const DeviceSpec a100 = load_hardware(dir + "/hardware/a100-80gb.yaml").device;
  // microbenchmarks.md 1b, A100 cuBLAS chart (+-10 TFLOPS): 1024^3 88, 2048^3 195, 4096^3 258.
  CHECK(gemm_efficiency(a100, 1024, 1024, 1024) * 312 == Approx(88).epsilon(0.10));
  CHECK(gemm_efficiency(a100, 2048, 2048, 2048) * 312 == Approx(195).epsilon(0.10));
  CHECK(gemm_efficiency(a100, 4096, 4096, 4096) * 312 == Approx(258).epsilon(0.10));
  const DeviceSpec h100 = load_hardware(dir + "/hardware/h100-80gb.yaml").device;
  // [zzc-H100] torch.mm: 2048^3 676.59, 4096^3 788.72, 8192^3 797.51 TFLOPS.
  CHECK(gemm_efficiency(h100, 2048, 2048, 2048) * 989 == Approx(676.59).epsilon(0.06));
  CHECK(gemm_efficiency(h100, 4096, 4096, 4096) * 989 == Approx(788.72).epsilon(0.06));
  CHECK(gemm_efficiency(h100, 8192, 8192, 8192) * 989 == Approx(797.51).epsilon(0.06));
}
