#!/usr/bin/env bash
# GPU run 6 at 398c2a7: the verification stop 50 owed - the GPU suite, the
# fault cases and memcheck over [graph],[matmul] (the C++ changed: matmul
# sizes out of the topology and kept in each node, the pool's rounding and
# releases, strided inputs in the import).
export NCCL_NVLS_ENABLE=0 HOSTJIT_SOURCE_DIR=$PWD HOSTJIT_CACHE_DIR=/tmp/hjcache
B=/tmp/b6
rm -rf $B && mkdir -p $B $OUT/r && tar xJf carry/d6.tar.xz -C $B
{ date -u; nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; echo 398c2a7; } > $OUT/r/info.txt
t=$B/hostjit_gpu_tests
SECONDS=0
timeout 240 $t '~[fault]' > $OUT/r/gpu_tests.log 2>&1; echo "gpu tests rc=$? ${SECONDS}s"; tail -3 $OUT/r/gpu_tests.log
grep -B2 -A12 "FAILED" $OUT/r/gpu_tests.log | head -60
for c in 0 1 2 3 4 5; do HOSTJIT_FAULT_CASE=$c timeout 60 $t '[fault]' > $OUT/r/fault_$c.log 2>&1; echo "case $c rc=$? $(tail -2 $OUT/r/fault_$c.log | tr '\n' ' ')"; done
SECONDS=0
timeout 280 compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 3 $t '[graph],[matmul]' > $OUT/r/memcheck.log 2>&1; echo "memcheck rc=$? ${SECONDS}s"
grep -E "ERROR SUMMARY|All tests|test cases" $OUT/r/memcheck.log | head -4
cd $OUT && tar czf r.tgz r && rm -rf r
true
