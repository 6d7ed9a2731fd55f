#!/usr/bin/env python3
"""Fit a hardware file's GEMM shape model (device.gemm.large, device.gemm.fixed_latency) to a
measured GEMM sweep in SimuMax's system-config format.

The shape model is the one sim/cost/gemm_shape.cpp prices with (tile and wave quantization on the
device's compute units, the largest tile and its halvings down to 64, plus a fixed time per
kernel):

    time = 2 b m k n / (peak * large * utilization) + fixed_latency

The sweep is the `accelerator.op.matmul.accurate_efficient_factor` table of a SimuMax system
config (keys "b=.., m=.., k=.., n=.., layout=.., ...", values achieved FLOP/s over `tflops`), e.g.
MooreThreads/SimuMax configs/system/b200_bf16_ceperm.json @ 4dcaae5, measured with Transformer
Engine's general_gemm (simu_tools/efficency_test/test_gemm_efficiency.py). Nothing is downloaded:
pass the file (fetch the repository yourself).

Usage:
  python3 tools/fit_gemm_sweep.py SWEEP.json --units 148 --tile 128x256

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
        shapes.append((int(fields["b"]), int(fields["m"]), int(fields["k"]), int(fields["n"]), float(efficiency)))
    return peak, shapes


def log_errors(peak, shapes, units, tile, large, latency_s):
    errors = []
    for b, m, k, n, measured in shapes:
        flops = 2.0 * b * m * k * n
        utilization = tiling_utilization(units, tile[0], tile[1], m, n, b)
        modelled = flops / (peak * (flops / (peak * large * utilization) + latency_s))
        errors.append(math.log(modelled / measured))
    return errors


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("sweep", help="SimuMax system config JSON with a matmul accurate_efficient_factor table")
    parser.add_argument("--units", type=int, required=True, help="device.compute_units (SMs)")
    parser.add_argument("--tile", default="128x256", help="device.gemm.tile_m x tile_n (default 128x256)")
    args = parser.parse_args()
    tile = tuple(int(x) for x in args.tile.split("x"))
    peak, shapes = read_sweep(args.sweep)

    octaves = {}
    for b, m, k, n, measured in shapes:
        octaves.setdefault(int(math.log2(2.0 * b * m * k * n)), []).append(measured)
    print("measured efficiency by FLOP octave (median, shapes):")
    for octave in sorted(octaves):
        print(f"  2^{octave}: {statistics.median(octaves[octave]):.3f} ({len(octaves[octave])})")

    best = None
    for large_milli in range(300, 901, 5):
        for latency_us in (0, 1, 2, 3, 4, 5, 6, 8, 10, 12, 15, 20, 25, 30):
            errors = log_errors(peak, shapes, args.units, tile, large_milli / 1000, latency_us * 1e-6)
            rms = math.sqrt(sum(e * e for e in errors) / len(errors))
            if best is None or rms < best[0]:
                best = (rms, statistics.mean(errors), large_milli / 1000, latency_us)
    rms, bias, large, latency_us = best
    print(f"fit over {len(shapes)} shapes: large {large:.3f}, fixed_latency {latency_us} us "
          f"(log-RMS {rms:.3f}, mean log error {bias:+.3f})")


if __name__ == "__main__":
    main()
