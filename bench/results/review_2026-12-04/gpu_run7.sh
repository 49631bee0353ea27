#!/usr/bin/env bash
# Binaries of 3620be4 (the final code): the GPU suite, the fault cases and
# memcheck over graph mode.
export NCCL_NVLS_ENABLE=0 HOSTJIT_SOURCE_DIR=$PWD
B=/tmp/b7
mkdir -p $B && tar xJf carry/f2.tar.xz -C $B
timeout 200 $B/hostjit_gpu_tests '~[fault]' > $OUT/suite.txt 2>&1; echo "suite rc=$?"
grep -E "All tests|test cases|FAILED" $OUT/suite.txt | head -10
for c in 0 1 2 3 4 5; do HOSTJIT_FAULT_CASE=$c timeout 60 $B/hostjit_gpu_tests '[fault]' > $OUT/fault$c.txt 2>&1; echo "fault $c rc=$?"; done
MC="compute-sanitizer --tool memcheck --leak-check full --report-api-errors no --error-exitcode 3"
timeout 200 $MC $B/hostjit_gpu_tests '[graph],[matmul]' > $OUT/memcheck.txt 2>&1; echo "memcheck rc=$?"
grep -E "ERROR SUMMARY|LEAK SUMMARY|All tests|test cases|FAILED" $OUT/memcheck.txt | head
