#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan + UBSan, RelWithDebInfo) and fuzzes each one
# with 2 workers until it has run its share of executions or its time is up, then replays
# every crash file to group the findings. Exit 1 when a finding reproduces (unless
# TRAINSIM_FUZZ_FAIL_ON_FINDINGS=0), 0 otherwise. See tests/fuzz/README.md.
#
# Environment (defaults in brackets):
#   TRAINSIM_FUZZ_BUILD_DIR       build directory [build-fuzz]
#   TRAINSIM_FUZZ_RUNS            executions per target, "target=runs ..." [scenario=650000 measured_run=400000]
#   TRAINSIM_FUZZ_MAX_SECONDS     time cap per target; the run stops at whichever comes first [480]
#   TRAINSIM_FUZZ_WORKERS         parallel fuzzing processes per target [2]
#   TRAINSIM_FUZZ_SEED            libFuzzer -seed, for a repeatable run [1]
#   TRAINSIM_FUZZ_FAIL_ON_FINDINGS 1: exit 1 on a reproducible finding; 0: report only [1]
#   TRAINSIM_FUZZ_SKIP_BUILD      1: use the binaries already in the build directory [0]
set -euo pipefail
cd "$(dirname "$0")/../.."
root="$PWD"
build="${TRAINSIM_FUZZ_BUILD_DIR:-build-fuzz}"
runs_spec="${TRAINSIM_FUZZ_RUNS:-scenario=650000 measured_run=400000}"
max_seconds="${TRAINSIM_FUZZ_MAX_SECONDS:-480}"
workers="${TRAINSIM_FUZZ_WORKERS:-2}"
seed="${TRAINSIM_FUZZ_SEED:-1}"
fail_on_findings="${TRAINSIM_FUZZ_FAIL_ON_FINDINGS:-1}"

if [ "${TRAINSIM_FUZZ_SKIP_BUILD:-0}" != 1 ]; then
  launcher=()
  command -v ccache > /dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ \
        -DTRAINSIM_BUILD_FUZZ=ON -DTRAINSIM_BUILD_TESTS=OFF -DTRAINSIM_BUILD_BENCH=OFF "${launcher[@]}"
  cmake --build "$build" -j "$(nproc)" --target trainsim_fuzz_scenario trainsim_fuzz_measured_run
fi

# ASan without allocation stacks in the hot loop (a tenth of the time went to recording
# them); the replay below runs with the full defaults, so reports keep their stacks.
fuzz_asan="malloc_context_size=0:detect_leaks=1"
out="$build/fuzz"
total_runs=0
total_findings=0
summary=()
for spec in $runs_spec; do
  target="${spec%%=*}"
  runs="${spec#*=}"
  binary="$build/tests/fuzz/trainsim_fuzz_$target"
  corpus="$out/corpus/$target"    # grows from run to run (new coverage); not committed
  findings="$out/findings/$target"
  log="$out/$target.log"
  mkdir -p "$corpus"
  rm -rf "$findings"
  mkdir -p "$findings"
  echo "== fuzz $target: $runs executions or ${max_seconds}s, $workers workers, seed $seed"
  start=$(date +%s)
  # -fork: the workers run in child processes and fuzzing goes on past a crash, so one run
  # lists every finding, not only the first. Limits: a single input may take 25 s and
  # allocate 2 GiB at once; more is a finding (a hang, or an allocation sized by the input).
  ASAN_OPTIONS="$fuzz_asan" UBSAN_OPTIONS=print_stacktrace=1 "$binary" \
    -fork="$workers" -ignore_crashes=1 -ignore_ooms=1 -ignore_timeouts=1 \
    -runs="$runs" -max_total_time="$max_seconds" -seed="$seed" \
    -dict="tests/fuzz/$target.dict" -max_len=4096 -timeout=25 -rss_limit_mb=3072 -malloc_limit_mb=2048 \
    -artifact_prefix="$findings/" "$corpus" "tests/fuzz/corpus/$target" > "$log" 2>&1 || true
  seconds=$(( $(date +%s) - start ))
  executions=$(grep -o '^#[0-9]*' "$log" | tail -1 | tr -d '#' || true)
  executions=${executions:-0}
  total_runs=$((total_runs + executions))

  # Replay each crash file alone (full ASan defaults) and group by the report's first line
  # that says what went wrong: our invariant message, the sanitizer summary (file:line) or
  # libFuzzer's verdict with the innermost trainsim frame. Numbers in messages are masked.
  : > "$findings/signatures.txt"
  for crash in "$findings"/crash-* "$findings"/oom-* "$findings"/timeout-* "$findings"/leak-*; do
    [ -f "$crash" ] || continue
    report="$("$binary" -timeout=25 -rss_limit_mb=3072 -malloc_limit_mb=2048 "$crash" 2>&1 || true)"
    signature="$(printf '%s\n' "$report" | grep -m1 -E 'trainsim fuzz finding:|^SUMMARY: ' || true)"
    case "$signature" in
      *"trainsim fuzz finding:"*) signature="$(printf '%s' "$signature" | sed -E 's/[-+]?[0-9][0-9.e+-]*/N/g')" ;;
      "")
        verdict="$(printf '%s\n' "$report" | grep -m1 -oE 'ERROR: libFuzzer: [a-z-]+' || true)"
        frame="$(printf '%s\n' "$report" | grep -m1 -oE 'in trainsim::[^ ]+ [^ ]+' || true)"
        signature="${verdict:-no longer reproduces} ${frame}"
        ;;
    esac
    printf '%s\t%s\n' "$signature" "$(basename "$crash")" >> "$findings/signatures.txt"
  done
  reproducible=$(grep -cv '^no longer reproduces' "$findings/signatures.txt" || true)
  distinct=$(grep -v '^no longer reproduces' "$findings/signatures.txt" | cut -f1 | sort -u | grep -c . || true)
  total_findings=$((total_findings + reproducible))
  rate=$(( executions / (seconds > 0 ? seconds : 1) ))
  summary+=("$(printf '%-13s %9d executions %5d s %6d exec/s  %3d crash files, %2d distinct findings' \
                "$target" "$executions" "$seconds" "$rate" "$reproducible" "$distinct")")
  if [ "$distinct" -gt 0 ]; then
    echo "findings of $target (one line each; crash files in $findings):"
    cut -f1 "$findings/signatures.txt" | grep -v '^no longer reproduces' | sort | uniq -c | sed 's/^/  /'
  fi
  echo "log: $log; corpus: $corpus ($(ls "$corpus" | wc -l) inputs)"
done

echo "== fuzz summary (seed $seed, $workers workers per target)"
printf '%s\n' "${summary[@]}"
echo "total: $total_runs executions, $total_findings reproducible crash files; findings in $out/findings"
if [ "$total_findings" -gt 0 ] && [ "$fail_on_findings" != 0 ]; then
  echo "FAIL: the fuzzer found inputs that crash or give a silent number (replay one: $build/tests/fuzz/trainsim_fuzz_<target> FILE)"
  exit 1
fi
