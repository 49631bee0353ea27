#!/usr/bin/env bash
# compute-sanitizer memcheck over graph mode, launches
# and matmuls, binaries of 2f1cc9f (the last commit changing C++).
export NCCL_NVLS_ENABLE=0 HOSTJIT_SOURCE_DIR=$PWD
B=/tmp/b
mkdir -p $B && tar xJf carry/g1.tar.xz -C $B
export LD_LIBRARY_PATH=$B
timeout 330 compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 9 $B/hostjit_gpu_tests '[graph],[matmul],[triton],[image]' > $OUT/memcheck.txt 2>&1; echo "memcheck rc=$?"
grep -E "ERROR SUMMARY|All tests|test cases|assertions" $OUT/memcheck.txt | head -6
