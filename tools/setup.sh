#!/usr/bin/env bash
# Command 1 of the README: install what is missing, build (Release), run the default scenario.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/install_deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DTRAINSIM_BUILD_TESTS=OFF
cmake --build build
./build/tools/trainsim run scenarios/default.yaml
