#pragma once
// GEMM time from its shape: tile and wave quantization on the device's compute units, plus a
// fixed time per kernel.
//
// A GEMM C (m x n) = A (m x k) . B (k x n) is cut into output tiles of tm x tn, one thread
// block (NVIDIA) or one cube-core block (Ascend) each; the device runs at most one tile per
// compute unit at a time, so the tiles run in ceil(tiles / units) waves and the last wave may
// leave units idle (wave quantization), and a tile that overhangs the matrix computes padding
// (tile quantization). NVIDIA, "Matrix Multiplication Background User's Guide"
// (DU-09799-001_v001, Feb 2023, https://docs.nvidia.com/deeplearning/performance/
// dl-performance-matrix-multiplication/index.html), sections 2.3 (cuBLAS tile sizes, 256x128
// down to 64x64, its heuristics picking among them), 3.1 (tile quantization) and 3.2 (wave
// quantization on the A100's 108 SMs).
//
//   time = 2 m n k batch / (peak x large x utilization) + fixed_latency
//   utilization = useful output elements / (waves x units x tm x tn)
//
// `large` is the device's best measured GEMM efficiency (MAMF, microbenchmarks.md 1a), reached
// at full utilization; fixed_latency is the kernel's ramp-up and tail that does not shrink with
// the work (fitted per device to the square GEMM sweeps of microbenchmarks.md 1b). The tile is
// the one of the library's list (the device's largest tile and its halvings down to 64 on each
// side) with the best utilization, as cuBLAS's heuristics choose a smaller tile to fill the
// device; a smaller tile's lower operand reuse is not priced (no published per-tile rates).
#include "trainsim/hardware/hardware_spec.hpp"

namespace trainsim {

struct GemmTiling {
  int tile_m = 0;
  int tile_n = 0;
  double tiles = 0;        // output tiles over the whole batch
  double waves = 0;        // ceil(tiles / compute units)
  double utilization = 0;  // useful share of the units' tile slots over all waves, (0, 1]
};

// The tiling of `batch` GEMMs of m x n outputs each (one batched or strided kernel) on a device
// with `compute_units` units and a largest tile of max_tile_m x max_tile_n.
GemmTiling gemm_tiling(int compute_units, int max_tile_m, int max_tile_n, double m, double n, double batch);

// Whether the device carries the shape model (compute units and a tile in its hardware file);
// without them the cost model keeps the efficiency-by-FLOPs curve.
bool has_gemm_shape_model(const DeviceSpec& device);

// Seconds of one kernel computing `batch` GEMMs of m x n x k at `peak` FLOP/s, before the
// sustained-compute fraction; needs has_gemm_shape_model(device).
double gemm_shape_time_s(const DeviceSpec& device, double peak, double m, double n, double k, double batch);

// The same as an efficiency: FLOPs / (peak x time), in (0, large].
double gemm_shape_efficiency(const DeviceSpec& device, double peak, double m, double n, double k, double batch);

}  // namespace trainsim
