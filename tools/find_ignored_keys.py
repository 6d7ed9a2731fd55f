#!/usr/bin/env python3
"""List the scenario keys a scenario may silently ignore: for each key of `trainsim keys`, run the
scenario with the key set to another valid value (a boolean flipped, each other choice, an
integer plus one and doubled, a number doubled) and print the settings that run (exit 0) and
give exactly the baseline's `run --json` figures.

What it prints are candidates, not defects: a value equal to the scenario's own (the scenario
already sets it), a key that only changes what `run` does not report (goodput, the Monte Carlo's
seed and jitter), or one whose effect is documented as none where it stands (a forced collective
algorithm that does not apply to any collective of the plan falls back, as NCCL does). The rest
are keys written where nothing would read them: the loader and plan_check refuse those (README,
"Bad input never crashes").

Usage:
  python3 tools/find_ignored_keys.py scenarios/default.yaml [--trainsim build/tools/trainsim]

Takes about a second per setting (two to three hundred settings a scenario).
"""
import argparse
import json
import re
import subprocess
import sys

# What a run's JSON says about the scenario rather than the step: left out of the comparison.
ECHOED = ["scenario", "plan", "hardware", "input", "inputs", "settings", "variability", "goodput"]


def schema_rows(trainsim):
    out = subprocess.run([trainsim, "keys"], capture_output=True, text=True, check=True).stdout
    rows = []
    for line in out.splitlines()[1:]:
        parts = re.split(r"\s{2,}", line.strip())
        if len(parts) >= 3:
            rows.append(parts)
    return rows


def candidates(kind, default, valid):
    if kind == "boolean":
        return ["false" if default == "true" else "true"]
    if kind == "choice":
        return [c.strip() for c in valid.split(",") if c.strip() and c.strip() != default]
    if kind == "integer":
        try:
            d = int(default)
        except ValueError:
            return ["2"]
        return sorted({str(d + 1), str(max(2, 2 * d))})
    if kind == "number":
        try:
            d = float(default)
        except ValueError:
            return ["0.1"]
        return [repr(2 * d) if d else "0.1"]
    return []  # quantities, lists, text: no generic other value


def figures(trainsim, scenario, sets):
    cmd = [trainsim, "run", scenario, "--json", "-"]
    for s in sets:
        cmd += ["--set", s]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        return None
    j = json.loads(p.stdout)
    for k in ECHOED:
        j.pop(k, None)
    return json.dumps(j, sort_keys=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("scenario")
    ap.add_argument("--trainsim", default="build/tools/trainsim")
    a = ap.parse_args()
    base = figures(a.trainsim, a.scenario, [])
    if base is None:
        sys.exit(f"{a.scenario}: the scenario itself does not run")
    for parts in schema_rows(a.trainsim):
        key, kind, default = parts[0], parts[1], parts[2]
        valid = parts[3] if len(parts) > 4 else ""
        for value in candidates(kind, default, valid):
            if figures(a.trainsim, a.scenario, [f"{key}={value}"]) == base:
                print(f"same figures: {key}={value}", flush=True)


if __name__ == "__main__":
    main()
