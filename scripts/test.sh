#!/usr/bin/env bash
# test.sh - sets everything up and runs every test through ctest.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
scripts/setup.sh
cd build
ctest --output-on-failure "$@"
