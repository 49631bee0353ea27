#!/usr/bin/env bash
# verify.sh - on the GPU machine, with carry/bundle.tar.xz (bundle.sh):
# the GPU suite, the fault cases 0-5, compute-sanitizer memcheck over the
# graph and matmul cases, and the GPU Python tests, each logged under
# $OUT/verify (one summary line each on stdout). Extra arguments are Catch2
# filters for the memcheck run (default '[graph],[matmul]').
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
export HOSTJIT_CACHE_DIR=/tmp/hjcache
: "${OUT:?verify.sh writes under \$OUT}"
log=$OUT/verify
mkdir -p "$log"
. scripts/gpu/bundle_env.sh || { echo "verify: no bundle"; exit 2; }
{ date -u; nvidia-smi -L; echo "bundle at $(tr '\n' ' ' < "$B/commit")"; } > "$log/info.txt" 2>&1
head -3 "$log/info.txt"
t=$B/hostjit_gpu_tests
SECONDS=0
timeout 200 "$t" '~[fault]' > "$log/gpu_tests.log" 2>&1
echo "gpu tests rc=$? ${SECONDS}s: $(tail -3 "$log/gpu_tests.log" | tr '\n' ' ')"
grep -B2 -A12 "FAILED" "$log/gpu_tests.log" | head -40
for c in 0 1 2 3 4 5; do
  HOSTJIT_FAULT_CASE=$c timeout 60 "$t" '[fault]' > "$log/fault_$c.log" 2>&1
  echo "fault case $c rc=$? $(tail -2 "$log/fault_$c.log" | tr '\n' ' ')"
done
filters="${*:-[graph],[matmul]}"
SECONDS=0
timeout 200 compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 3 "$t" "$filters" \
  > "$log/memcheck.log" 2>&1
echo "memcheck $filters rc=$? ${SECONDS}s: $(grep -E "ERROR SUMMARY|All tests|test cases" "$log/memcheck.log" | tr '\n' ' ')"
SECONDS=0
timeout 200 python3 -m pytest -q -rs test/python/test_gpu.py test/python/test_dynamo.py \
  > "$log/pytest.log" 2>&1
echo "pytest rc=$? ${SECONDS}s: $(tail -1 "$log/pytest.log")"
grep -E "^E |FAILED" "$log/pytest.log" | head -20 | cut -c1-300
true
