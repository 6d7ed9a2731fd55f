#!/usr/bin/env python3
"""Min and median per benchmark case from Google Benchmark JSON output(s).

  trainsim_bench --benchmark_repetitions=5 --benchmark_out=run.json --benchmark_out_format=json
  bench/summarize.py run.json [more.json ...]

Times are CPU time of the benchmark thread (wall time on a shared machine also counts the
time other processes hold the core); items/s for the analytical tier.
"""
import json
import statistics
import sys

runs = {}
for path in sys.argv[1:]:
    with open(path) as f:
        for b in json.load(f)["benchmarks"]:
            if b.get("run_type") == "aggregate":
                continue
            runs.setdefault(b["run_name"], []).append(b)

print(f"{'case':48} {'n':>3} {'cpu min':>12} {'cpu median':>12} {'wall min':>12}  extra")
for name, rs in runs.items():
    unit = rs[0].get("time_unit", "ns")
    cpu = sorted(r["cpu_time"] for r in rs)
    wall = sorted(r["real_time"] for r in rs)
    extra = ""
    if "items_per_second" in rs[0]:
        ips = sorted(r["items_per_second"] for r in rs)
        extra = f"plans/s max {ips[-1]:,.0f} median {statistics.median(ips):,.0f}"
    print(f"{name:48} {len(rs):>3} {cpu[0]:>9.3f} {unit:2} {statistics.median(cpu):>9.3f} {unit:2} "
          f"{wall[0]:>9.3f} {unit:2}  {extra}")
