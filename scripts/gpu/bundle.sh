#!/usr/bin/env bash
# bundle.sh - packs what a GPU machine without LLVM needs to test this
# checkout (the developers' build-here, run-there routine): the CLI and the
# GPU test binary from build/ (LLVM linked statically), and the Python
# module built for the GPU machine's Python 3.12 (build-py312/), stripped,
# into carry/bundle.tar.xz with the commit they were built from.
#   scripts/gpu/bundle.sh [PYTHON312]   (default: pyenv's 3.12)
# Then, on the GPU machine: scripts/gpu/verify.sh (carry: ["carry"]).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
py312="${1:-$(ls -d /root/.pyenv/versions/3.12*/bin/python3 2>/dev/null | head -1)}"
[ -x "$py312" ] || { echo "bundle: no Python 3.12 (give its python3 as the argument)" >&2; exit 2; }
ninja -C build hostjit hostjit_gpu_tests >/dev/null
if [ ! -f build-py312/build.ninja ]; then
  cmake -S . -B build-py312 -G Ninja -DCMAKE_BUILD_TYPE=Release -DPython3_EXECUTABLE="$py312" \
    -DHOSTJIT_BUILD_TESTS=OFF -DHOSTJIT_BUILD_BENCH=OFF >/dev/null
fi
CCACHE_NOHASHDIR=1 ninja -C build-py312 hostjit_python >/dev/null
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/hostjit_py"
strip -o "$stage/hostjit" build/bin/hostjit
strip -o "$stage/hostjit_gpu_tests" build/bin/hostjit_gpu_tests
for so in build-py312/python/hostjit/*.so; do strip -o "$stage/hostjit_py/$(basename "$so")" "$so"; done
git rev-parse --short HEAD > "$stage/commit"
git diff --quiet HEAD -- . ':!carry' || echo "dirty" >> "$stage/commit"
mkdir -p carry
# One xz thread keeps the window shared across the LLVM-holding files.
(cd "$stage" && tar cf - .) | xz -6 -T1 > carry/bundle.tar.xz
echo "bundle: carry/bundle.tar.xz ($(du -h carry/bundle.tar.xz | cut -f1)) at $(cat "$stage/commit" | tr '\n' ' ')"
