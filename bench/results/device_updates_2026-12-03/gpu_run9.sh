#!/usr/bin/env bash
# hostjit_gpu_tests of a9b7b27 (the review's fixes): graph, launch
# attribute, custom and matmul cases; memcheck over [graph].
export NCCL_NVLS_ENABLE=0 HOSTJIT_SOURCE_DIR=$PWD
B=/tmp/b
mkdir -p $B && tar xJf carry/t1.tar.xz -C $B
timeout 60 $B/hostjit_gpu_tests '[graph],[launch],[custom],[matmul]' > $OUT/tests.txt 2>&1; echo "tests rc=$?"
grep -E "All tests|test cases|FAILED" -A4 $OUT/tests.txt | head -20
MC="compute-sanitizer --tool memcheck --leak-check full --report-api-errors no --error-exitcode 3"
timeout 100 $MC $B/hostjit_gpu_tests '[graph]' > $OUT/memcheck.txt 2>&1; echo "memcheck rc=$?"
grep -E "ERROR SUMMARY|LEAK SUMMARY|All tests|test cases|FAILED" $OUT/memcheck.txt | head
