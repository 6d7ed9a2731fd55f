#!/usr/bin/env bash
# Command 2 of the README: install what is missing, build, run the whole suite through CTest.
# With --sanitize, the same suite is built and run again under ASan + UBSan.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/install_deps.sh --test
jobs=$(nproc)
cmake -S . -B build-test -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTRAINSIM_BUILD_TESTS=ON -DTRAINSIM_BUILD_BENCH=ON
cmake --build build-test -j "$jobs"
ctest --test-dir build-test --output-on-failure -j "$jobs"
if [ "${1:-}" = "--sanitize" ]; then
  cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DTRAINSIM_SANITIZE=ON -DTRAINSIM_BUILD_TESTS=ON
  cmake --build build-asan -j "$jobs"
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --test-dir build-asan --output-on-failure -j "$jobs"
fi
