#!/usr/bin/env bash
# test.sh - sets everything up and runs every test through ctest.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
scripts/setup.sh
cd build
status=0
ctest --output-on-failure "$@" || status=$?
# Say visibly whether the GPU tests ran or why they were skipped.
bin/hostjit_gpu_tests --probe || true
exit $status
