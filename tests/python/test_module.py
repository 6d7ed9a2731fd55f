"""The Python module answers as the command line does (issue 20). Run by CTest with the
module's directory on PYTHONPATH and the source tree as the working directory; exits
non-zero on the first failed check."""
import json
import math
import os
import subprocess
import sys

import trainsim

TRAINSIM_CLI = sys.argv[1]
DEFAULT = "scenarios/default.yaml"


def plain(value):
    """Only what json and pandas take: dict, list, str, int, float, bool, None."""
    if isinstance(value, dict):
        return all(isinstance(k, str) and plain(v) for k, v in value.items())
    if isinstance(value, list):
        return all(plain(v) for v in value)
    return value is None or isinstance(value, (str, int, float, bool))


def cli_json(*args):
    out = subprocess.run([TRAINSIM_CLI, *args, "--json", "-"], check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def check(condition, what):
    if not condition:
        sys.exit("FAILED: " + what)


check(trainsim.version() == subprocess.run([TRAINSIM_CLI, "--version"], capture_output=True,
                                           text=True).stdout.split()[1], "version() is the CLI's")

# run(): the same keys and step time as `trainsim run --json`.
step = trainsim.run(DEFAULT, set={"plan.micro_batch_size": 2})
cli = cli_json("run", DEFAULT, "--set", "plan.micro_batch_size=2")
check(plain(step), "run() returns plain values")
check(step["status"] == "ok", "default scenario fits")
check(set(step) <= set(cli) and "step_time_interval" not in step, "run() keys are run --json's (no interval)")
check(step["step_time_s"] == cli["step_time_s"], "run() step time equals the CLI's")
check(math.isfinite(step["mfu"]) and 0 < step["mfu"] < 1, "MFU in (0, 1)")

# A dict scenario gives the same answer as the file it was read from.
as_dict = {"model": "models/llama2-7b.yaml", "hardware": "hardware/ascend-910b3.yaml", "num_devices": 8,
           "plan": {"framework": "mindspeed", "tensor_model_parallel_size": 1, "pipeline_model_parallel_size": 2, "micro_batch_size": 2,
                    "global_batch_size": 128, "seq_length": 4096, "sequence_parallel": False,
                    "use_distributed_optimizer": True, "overlap_grad_reduce": True, "use_flash_attn": True,
                    "recompute_granularity": "none", "schedule": "1f1b", "precision": "bf16"},
           "data": {"sample_load_time": "0s", "loader_workers": 2}}
check(trainsim.run(as_dict)["step_time_s"] == step["step_time_s"], "dict scenario == file scenario")

# Out of memory is an answer, as on the command line.
oom = trainsim.memory(DEFAULT, set=["plan.pipeline_model_parallel_size=1", "plan.micro_batch_size=16"])
check(oom["status"] == "does_not_fit" and oom["out_of_memory"]["fits_with"], "memory() OOM verdict with advice")

# sweep(): one flat dict per combination, the grid's keys as columns.
rows = trainsim.sweep(DEFAULT, {"plan.micro_batch_size": [1, 2], "plan.schedule": ["1f1b", "zb-h1"]})
check(plain(rows) and len(rows) == 4, "sweep() gives 4 plain rows")
check({"plan.micro_batch_size", "plan.schedule", "status", "step_time_s"} <= set(rows[0]), "flat sweep columns")
check(sorted((r["plan.micro_batch_size"], r["plan.schedule"]) for r in rows)
      == [(1, "1f1b"), (1, "zb-h1"), (2, "1f1b"), (2, "zb-h1")], "every combination once, values as given")

# Bad input raises ValueError with the command line's one-line message.
for bad, expected in [({"plan.tensor_model_parallel_size": 3}, "does not divide"),
                      ({"plan.schedle": "1f1b"}, "did you mean 'plan.schedule'")]:
    try:
        trainsim.run(DEFAULT, set=bad)
        check(False, "bad input raised")
    except ValueError as e:
        # One line per problem, as the command line prints them.
        check(expected in str(e) and all(": " in line for line in str(e).splitlines()), "ValueError: " + str(e))
try:
    trainsim.run({"model": "models/llama2-7b.yaml"})
    check(False, "incomplete dict raised")
except ValueError as e:
    check(str(e).startswith("<dict>") and "hardware" in str(e), "dict errors name <dict>: " + str(e))
try:
    trainsim.run(42)
    check(False, "a number is not a scenario")
except TypeError:
    pass

# search(): the best plan replayed, as a dict.
found = trainsim.search(DEFAULT, devices=8, top=2, set={"plan.global_batch_size": 16})
check(plain(found) and len(found["best"]) == 2, "search() top 2")
print("ok")
