#!/usr/bin/env bash
# The graph tests, plain and under memcheck, at the last runtime change.
export NCCL_NVLS_ENABLE=0 HOSTJIT_SOURCE_DIR=$PWD
B=/tmp/b; mkdir -p $B && tar xJf carry/b6.tar.xz -C $B
L=$OUT/graph.txt
timeout 40 $B/hostjit_gpu_tests '[graph],[custom]' > $L 2>&1; echo "graph+custom rc=$?" >> $L
timeout 100 compute-sanitizer --tool memcheck --leak-check full --report-api-errors no --error-exitcode 3 $B/hostjit_gpu_tests '[graph]' >> $L 2>&1; echo "memcheck graph rc=$?" >> $L
grep -E "rc=|FAILED|ERROR SUMMARY|LEAK SUMMARY|All tests|test cases" $L
