#!/usr/bin/env bash
# setup.sh - installs what hostjit needs (Debian 12, only what is missing)
# and configures and builds it into build/. Sourced by demo.sh and test.sh.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

packages=(cmake ninja-build g++ python3 ccache llvm-19-dev llvm-19-tools catch2 libdlpack-dev
          libzstd-dev zlib1g-dev libbenchmark-dev nlohmann-json3-dev
          python3-dev pybind11-dev python3-numpy python3-pytest)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

build_type="${HOSTJIT_BUILD_TYPE:-Release}"
# HOSTJIT_SANITIZE=address,undefined (or thread) builds into its own folder.
build_dir="${HOSTJIT_BUILD_DIR:-build}"
if [ -n "${HOSTJIT_SANITIZE:-}" ]; then build_dir="build-${HOSTJIT_SANITIZE//,/-}"; fi
# The Python module is built for Debian's interpreter, whose NumPy and
# pytest the packages above installed (HOSTJIT_PYTHON picks another).
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE="$build_type" -DHOSTJIT_SANITIZE="${HOSTJIT_SANITIZE:-}" \
  -DPython3_EXECUTABLE="${HOSTJIT_PYTHON:-/usr/bin/python3}" >/dev/null
ninja -C "$build_dir"
