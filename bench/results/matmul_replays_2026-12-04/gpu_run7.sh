#!/usr/bin/env bash
# GPU run 7 at 69a6076 (the matmuls' own room, CudaMatmuls, out of the CUDA
# backend; the last commit changing C++): the GPU suite, fault cases and
# memcheck over [graph],[matmul],[triton],[image].
export NCCL_NVLS_ENABLE=0 HOSTJIT_SOURCE_DIR=$PWD HOSTJIT_CACHE_DIR=/tmp/hjcache
B=/tmp/b10
rm -rf $B /tmp/hjcache
mkdir -p $B $OUT/r && tar xJf carry/m10.tar.xz -C $B
t=$B/hostjit_gpu_tests
{ date -u; nvidia-smi -L; echo 69a6076; } > $OUT/r/info.txt
T0=$SECONDS
timeout 120 $t '~[fault]' > $OUT/r/gpu_tests.log 2>&1; echo "rc=$?" >> $OUT/r/gpu_tests.log; echo "gpu tests: $(tail -3 $OUT/r/gpu_tests.log | tr '\n' ' ') $((SECONDS-T0))s"
grep -B5 -A25 "FAILED" $OUT/r/gpu_tests.log | head -60
for c in 0 1 2 3 4 5; do HOSTJIT_FAULT_CASE=$c timeout 30 $t '[fault]' > $OUT/r/fault_$c.log 2>&1; echo "case $c rc=$? $(tail -2 $OUT/r/fault_$c.log | tr '\n' ' ')" >> $OUT/r/faults.txt; done; cat $OUT/r/faults.txt
T0=$SECONDS
timeout 60 compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 3 $t '[graph],[matmul],[triton],[image]' > $OUT/r/memcheck.log 2>&1; echo "memcheck rc=$? $((SECONDS-T0))s"
grep -E "ERROR SUMMARY|All tests|test cases" $OUT/r/memcheck.log | head -3
cd $OUT && tar czf r.tgz r && rm -rf r
true
