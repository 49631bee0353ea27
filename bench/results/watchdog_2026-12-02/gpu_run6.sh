#!/usr/bin/env bash
# GPU run 6 (issue 26): the watchdog tests after the capture test's fix, and memcheck of it.
set -x
export NCCL_NVLS_ENABLE=0 HOSTJIT_SOURCE_DIR=$PWD HOSTJIT_CACHE_DIR=/tmp/hjcache
mkdir -p /tmp/b $OUT/r && tar xJf carry/b6.tar.xz -C /tmp/b
t=/tmp/b/bin/hostjit_gpu_tests
timeout 60 $t '[watchdog]' > $OUT/r/watchdog_tests.log 2>&1; echo "rc=$?" >> $OUT/r/watchdog_tests.log; tail -3 $OUT/r/watchdog_tests.log
timeout 100 compute-sanitizer --tool memcheck --leak-check full --report-api-errors no --error-exitcode 3 $t 'watchdog on one GPU: a caller*' > $OUT/r/memcheck_capture.log 2>&1; echo "rc=$?" >> $OUT/r/memcheck_capture.log; tail -3 $OUT/r/memcheck_capture.log
cd $OUT && tar czf results.tgz r && rm -rf r
