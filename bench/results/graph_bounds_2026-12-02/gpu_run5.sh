#!/usr/bin/env bash
# The watchdog's collective case: plain (2 s) and under memcheck with a 10 s timeout.
export NCCL_NVLS_ENABLE=0 HOSTJIT_SOURCE_DIR=$PWD
B=/tmp/b
mkdir -p $B && tar xJf carry/b5.tar.xz -C $B
L=$OUT/watchdog.txt
MC="compute-sanitizer --tool memcheck --leak-check full --report-api-errors no --error-exitcode 3"
timeout 60 $B/hostjit_gpu_tests "[watchdog]" > $L 2>&1; echo "plain watchdog rc=$?" >> $L
timeout 90 $B/hostjit_gpu_tests "[graph]" >> $L 2>&1; echo "graph tests rc=$?" >> $L
HOSTJIT_TEST_WATCHDOG_TIMEOUT=10 timeout 300 $MC $B/hostjit_gpu_tests 'watchdog on one GPU: a collective*' >> $L 2>&1; echo "memcheck collective rc=$?" >> $L
grep -E "rc=|with message|FAILED|ERROR SUMMARY|LEAK SUMMARY|All tests|test cases|Leaked" -A2 $L | head -40
