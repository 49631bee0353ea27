#!/usr/bin/env bash
# demo.sh - sets everything up and runs the main demo: the grid reduction
# example end to end (CUDA when a GPU is present, else the host backend).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
scripts/setup.sh
exec build/bin/hostjit-demo grid_sum --backend auto "$@"
