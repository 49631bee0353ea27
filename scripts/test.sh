#!/usr/bin/env bash
# test.sh - sets everything up and runs every test through ctest.
# HOSTJIT_SANITIZE=address,undefined (or thread) builds and tests a
# sanitizer build in its own folder instead.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
scripts/setup.sh
build_dir=build
if [ -n "${HOSTJIT_SANITIZE:-}" ]; then
  build_dir="build-${HOSTJIT_SANITIZE//,/-}"
  # Any finding, a leak included, fails the test that hit it.
  export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}"
  export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
fi
cd "$build_dir"
status=0
ctest --output-on-failure "$@" || status=$?
# Say visibly whether the GPU tests ran or why they were skipped: the C++
# suite's probe, and pytest's summary of skipped Python tests.
bin/hostjit_gpu_tests --probe || true
grep -h "^SKIPPED \\[" Testing/Temporary/LastTest.log 2>/dev/null | sed 's/^/python: /' || true
exit $status
