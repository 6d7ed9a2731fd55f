#include "trainsim/cost/gemm_shape.hpp"

#include <algorithm>
#include <cmath>

namespace trainsim {

namespace {

// Tiles of one side of the library's list: the largest and its halvings down to 64 (cuBLAS's
// smallest tensor-core tile side in the user's guide, section 2.3).
constexpr int kSmallestTileSide = 64;

GemmTiling tiling_for(int units, int tm, int tn, double m, double n, double batch) {
  GemmTiling t;
  t.tile_m = tm;
  t.tile_n = tn;
  t.tiles = batch * std::ceil(m / tm) * std::ceil(n / tn);
  t.waves = std::ceil(t.tiles / units);
  t.utilization = batch * m * n / (t.waves * units * static_cast<double>(tm) * tn);
  return t;
}

}  // namespace

GemmTiling gemm_tiling(int compute_units, int max_tile_m, int max_tile_n, double m, double n, double batch) {
  const int units = std::max(1, compute_units);
  m = std::max(1.0, m);
  n = std::max(1.0, n);
  batch = std::max(1.0, batch);
  GemmTiling best;
  // Both orientations of the largest tile (cuBLAS lists 256x128 and 128x256 alike).
  for (int orientation = 0; orientation < 2; ++orientation) {
    const int top_m = orientation == 0 ? max_tile_m : max_tile_n;
    const int top_n = orientation == 0 ? max_tile_n : max_tile_m;
    for (int tm = top_m; tm >= std::min(top_m, kSmallestTileSide); tm /= 2) {
      for (int tn = top_n; tn >= std::min(top_n, kSmallestTileSide); tn /= 2) {
        const GemmTiling t = tiling_for(units, tm, tn, m, n, batch);
        // Ties go to the larger tile (more operand reuse), the one met first.
        if (t.utilization > best.utilization * (1 + 1e-12)) best = t;
        if (tn == kSmallestTileSide) break;
      }
      if (tm == kSmallestTileSide) break;
    }
  }
  return best;
}

bool has_gemm_shape_model(const DeviceSpec& device) {
  return device.compute_units > 0 && device.gemm.tile_m > 0 && device.gemm.tile_n > 0;
}

double gemm_shape_time_s(const DeviceSpec& device, double peak, double m, double n, double k, double batch) {
  const GemmTiling t = gemm_tiling(device.compute_units, device.gemm.tile_m, device.gemm.tile_n, m, n, batch);
  const double flops = 2.0 * std::max(1.0, batch) * m * n * k;
  return flops / (peak * device.gemm.large * t.utilization) + device.gemm.fixed_latency_s;
}

double gemm_shape_efficiency(const DeviceSpec& device, double peak, double m, double n, double k, double batch) {
  const double flops = 2.0 * std::max(1.0, batch) * m * n * k;
  if (!(flops > 0) || !(peak > 0)) return device.gemm.large;
  return flops / (peak * gemm_shape_time_s(device, peak, m, n, k, batch));
}

}  // namespace trainsim
