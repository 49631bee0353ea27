#!/bin/bash
# Issue 24 at 4472f57, 3045121 and 5fc1624: the profile tests, memcheck over them and graph mode,
# the suite, and the streams example's trace again (anchor at the middle of
# the record's round trip).
export NCCL_NVLS_ENABLE=0
export HOSTJIT_SOURCE_DIR=$PWD HOSTJIT_CACHE_DIR=/tmp/hjcache
mkdir -p /tmp/b && tar xJf carry/gpu2.tar.xz -C /tmp/b
H=/tmp/b/hostjit
( time timeout 150 /tmp/b/hostjit_gpu_tests '~[fault]' ) > $OUT/suite.txt 2>&1; echo "rc=$?" >> $OUT/suite.txt
grep -E "test cases|All tests|rc=|^real|FAILED" $OUT/suite.txt | head
( timeout 200 compute-sanitizer --tool memcheck --leak-check full --report-api-errors no --error-exitcode 9 /tmp/b/hostjit_gpu_tests '[profile],[graph]' ) > $OUT/memcheck.txt 2>&1; echo "rc=$?" >> $OUT/memcheck.txt
grep -E "All tests|test cases|LEAK SUMMARY|ERROR SUMMARY|rc=|FAILED" $OUT/memcheck.txt
timeout 60 $H run examples/streams.hir --backend cuda --input x=f32[4194304] --scalar alpha=2.0 --scalar beta=-0.5 --no-tier --repeat 20 --profile --trace $OUT/streams.json > $OUT/cli_streams.txt 2>&1; echo "rc=$?" >> $OUT/cli_streams.txt
head -12 $OUT/cli_streams.txt
