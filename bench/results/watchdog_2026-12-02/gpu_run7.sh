#!/usr/bin/env bash
# GPU run 7 (issue 26): the final check at a69f3e0: the suite and memcheck of the watchdog's collective case.
set -x
export NCCL_NVLS_ENABLE=0 HOSTJIT_SOURCE_DIR=$PWD HOSTJIT_CACHE_DIR=/tmp/hjcache
mkdir -p /tmp/b $OUT/r && tar xJf carry/b7.tar.xz -C /tmp/b
t=/tmp/b/bin/hostjit_gpu_tests
timeout 90 $t '~[fault]' > $OUT/r/gpu_tests.log 2>&1; echo "rc=$?" >> $OUT/r/gpu_tests.log; tail -3 $OUT/r/gpu_tests.log
timeout 45 compute-sanitizer --tool memcheck --leak-check full --report-api-errors no --error-exitcode 3 $t 'watchdog on one GPU: a collective*' > $OUT/r/memcheck_collective.log 2>&1; echo "rc=$?" >> $OUT/r/memcheck_collective.log; tail -3 $OUT/r/memcheck_collective.log
cd $OUT && tar czf results.tgz r && rm -rf r
