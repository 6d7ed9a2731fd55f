#!/usr/bin/env bash
# Installs the Debian 12 packages trainsim builds with, only those missing.
set -euo pipefail
packages=(build-essential cmake ninja-build pkg-config libboost-graph-dev libyaml-cpp-dev libeigen3-dev
          libspdlog-dev libfmt-dev catch2 libcli11-dev nlohmann-json3-dev libtbb-dev libbenchmark-dev
          python3-dev pybind11-dev libopenmpi-dev openmpi-bin)
# With --test: also Debian's Chromium, for the browser test of the HTML report.
# With --fuzz: also clang with libFuzzer and the sanitizer runtimes, for tests/fuzz/run.sh.
for option in "$@"; do
  case "$option" in
    --test) packages+=(chromium) ;;
    --fuzz) packages+=(clang libfuzzer-14-dev libclang-rt-14-dev) ;;
  esac
done
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}"
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${missing[@]}"
fi
