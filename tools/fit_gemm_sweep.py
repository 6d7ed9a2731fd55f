#!/usr/bin/env python3
"""Fit a hardware file's GEMM shape model (device.gemm.large, device.gemm.fixed_latency) to a
measured GEMM sweep in SimuMax's system-config format.

The shape model is the one sim/cost/gemm_shape.cpp prices with (tile and wave quantization on the
device's compute units, the largest tile and its halvings down to 64, plus a fixed time per
kernel):

    time = 2 b m k n / (peak * large * utilization) + fixed_latency

and, for a weight-gradient GEMM that accumulates into its output (the sweep's accumulate=True
rows: Megatron's gradient accumulation fusion, beta 1 on the gradient buffer), the buffer read
its math waits for, floored by the kernel's whole traffic (sim/cost/cost_model.cpp op_timing,
Op::weight_grad_serial_bytes):

    time = max(time + out_bytes b m n / bandwidth, (2 out_bytes b m n + 2 b (m k + k n)) / bandwidth)

with bandwidth = --hbm-bandwidth x --memory-efficiency (the hardware file's hbm_bandwidth and
memory_bound_efficiency).

The sweep is the `accelerator.op.matmul.accurate_efficient_factor` table of a SimuMax system
config (keys "b=.., m=.., k=.., n=.., layout=.., ...", values achieved FLOP/s over `tflops`), e.g.
MooreThreads/SimuMax configs/system/b200_bf16_ceperm.json @ 4dcaae5, measured with Transformer
Engine's general_gemm (simu_tools/efficency_test/test_gemm_efficiency.py). Nothing is downloaded:
pass the file (fetch the repository yourself).

Usage:
  python3 tools/fit_gemm_sweep.py SWEEP.json --units 148 --tile 128x256 --hbm-bandwidth 8e12 --memory-efficiency 0.75

Prints the grid optimum of (large, fixed_latency) by log-RMS error over all shapes, its bias,
and the median measured efficiency by FLOP octave.
"""
import argparse
import json
import math
import statistics


def tiling_utilization(units, max_tile_m, max_tile_n, m, n, batch):
    best = 0.0
    for top_m, top_n in ((max_tile_m, max_tile_n), (max_tile_n, max_tile_m)):
        tm = top_m
        while True:
            tn = top_n
            while True:
                tiles = batch * math.ceil(m / tm) * math.ceil(n / tn)
                waves = math.ceil(tiles / units)
                utilization = batch * m * n / (waves * units * tm * tn)
                if utilization > best * (1 + 1e-12):
                    best = utilization
                if tn <= 64:
                    break
                tn //= 2
            if tm <= 64:
                break
            tm //= 2
    return best


def read_sweep(path):
    config = json.load(open(path))
    matmul = config["accelerator"]["op"]["matmul"]
    peak = float(matmul["tflops"]) * 1e12
    shapes = []
    for key, efficiency in matmul["accurate_efficient_factor"].items():
        fields = dict(part.split("=") for part in key.split(", "))
        # Bytes of each output element an accumulating GEMM reads back (0: it only writes).
        accumulated = {"fp32": 4, "bf16": 2}[fields.get("out_dtype", "bf16")] if fields.get("accumulate") == "True" else 0
        shapes.append((int(fields["b"]), int(fields["m"]), int(fields["k"]), int(fields["n"]), float(efficiency),
                       accumulated))
    return peak, shapes


def log_errors(peak, shapes, units, tile, large, latency_s, bandwidth):
    errors = []
    for b, m, k, n, measured, accumulated in shapes:
        flops = 2.0 * b * m * k * n
        utilization = tiling_utilization(units, tile[0], tile[1], m, n, b)
        time = flops / (peak * large * utilization) + latency_s
        if accumulated:
            time = max(time + accumulated * b * m * n / bandwidth,
                       (2 * accumulated * b * m * n + 2 * b * (m * k + k * n)) / bandwidth)
        modelled = flops / (peak * time)
        errors.append(math.log(modelled / measured))
    return errors


def grouped_log_errors(config, units, tile, large, latency_s, bandwidth):
    """The sweep's grouped-GEMM table (accelerator.op.group_matmul, TE's grouped GEMM over ng
    experts), priced as trainsim prices a grouped GEMM: each expert its own kernel of M tokens.
    Reported, not fitted. Returns {stage: [log errors]}."""
    table = config["accelerator"]["op"].get("group_matmul", {})
    peak = float(table.get("tflops", 0)) * 1e12
    out = {}
    for key, measured in table.get("accurate_efficient_factor", {}).items():
        fields = dict(part.split("=") for part in key.split(", "))
        ng, m, n, k = (int(fields[x]) for x in ("ng", "M", "N", "K"))
        stage = fields["stage"]
        # The pass's output is m x n over a reduction of k: forward M x N (K), dgrad M x K (N),
        # wgrad N x K (M), the latter accumulating into the main_grad dtype.
        rows, cols, depth = {"fwd": (m, n, k), "bwd_grad_act": (m, k, n), "bwd_grad_w": (n, k, m)}[stage]
        flops = 2.0 * ng * m * n * k
        time = ng * (2.0 * rows * cols * depth / (peak * large * tiling_utilization(units, tile[0], tile[1], rows, cols, 1))
                     + latency_s)
        if stage == "bwd_grad_w" and fields.get("accumulate") == "True":
            accumulated = {"fp32": 4, "bf16": 2}[fields["main_grad_dtype"]]
            time = max(time + accumulated * ng * rows * cols / bandwidth,
                       (2 * accumulated * ng * rows * cols + 2 * ng * depth * (rows + cols)) / bandwidth)
        out.setdefault(stage, []).append(math.log(flops / (peak * time) / measured))
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("sweep", help="SimuMax system config JSON with a matmul accurate_efficient_factor table")
    parser.add_argument("--units", type=int, required=True, help="device.compute_units (SMs)")
    parser.add_argument("--tile", default="128x256", help="device.gemm.tile_m x tile_n (default 128x256)")
    parser.add_argument("--hbm-bandwidth", type=float, required=True, help="device.hbm_bandwidth in bytes/s")
    parser.add_argument("--memory-efficiency", type=float, required=True, help="device.memory_bound_efficiency")
    args = parser.parse_args()
    bandwidth = args.hbm_bandwidth * args.memory_efficiency
    tile = tuple(int(x) for x in args.tile.split("x"))
    peak, shapes = read_sweep(args.sweep)

    octaves = {}
    for b, m, k, n, measured, _ in shapes:
        octaves.setdefault(int(math.log2(2.0 * b * m * k * n)), []).append(measured)
    print("measured efficiency by FLOP octave (median, shapes):")
    for octave in sorted(octaves):
        print(f"  2^{octave}: {statistics.median(octaves[octave]):.3f} ({len(octaves[octave])})")

    best = None
    for large_milli in range(300, 901, 5):
        for latency_us in (0, 1, 2, 3, 4, 5, 6, 8, 10, 12, 15, 20, 25, 30):
            errors = log_errors(peak, shapes, args.units, tile, large_milli / 1000, latency_us * 1e-6, bandwidth)
            rms = math.sqrt(sum(e * e for e in errors) / len(errors))
            if best is None or rms < best[0]:
                best = (rms, statistics.mean(errors), large_milli / 1000, latency_us)
    rms, bias, large, latency_us = best
    print(f"fit over {len(shapes)} shapes: large {large:.3f}, fixed_latency {latency_us} us "
          f"(log-RMS {rms:.3f}, mean log error {bias:+.3f})")
    grouped = grouped_log_errors(json.load(open(args.sweep)), args.units, tile, large, latency_us * 1e-6, bandwidth)
    for stage, errors in sorted(grouped.items()):
        rms = math.sqrt(sum(e * e for e in errors) / len(errors))
        print(f"grouped GEMM table (not fitted), {stage}: {len(errors)} shapes, log-RMS {rms:.3f}, "
              f"mean log error {statistics.mean(errors):+.3f}")


if __name__ == "__main__":
    main()
