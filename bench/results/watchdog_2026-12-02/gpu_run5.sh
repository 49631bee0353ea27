#!/usr/bin/env bash
# GPU run 5 (issue 26): the check at da8168a: suite, fault cases, memcheck, watchdog cases, cost.
set -x
export NCCL_NVLS_ENABLE=0 HOSTJIT_SOURCE_DIR=$PWD HOSTJIT_CACHE_DIR=/tmp/hjcache
mkdir -p /tmp/b $OUT/r && tar xJf carry/b5.tar.xz -C /tmp/b
{ date -u; nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; echo da8168a; } > $OUT/r/info.txt
t=/tmp/b/bin/hostjit_gpu_tests
timeout 60 $t '[watchdog]' -s > $OUT/r/watchdog_tests.log 2>&1; echo "rc=$?" >> $OUT/r/watchdog_tests.log; tail -3 $OUT/r/watchdog_tests.log
timeout 200 $t '~[fault]' > $OUT/r/gpu_tests.log 2>&1; echo "rc=$?" >> $OUT/r/gpu_tests.log; tail -3 $OUT/r/gpu_tests.log
for c in 0 1 2 3 4 5; do HOSTJIT_FAULT_CASE=$c timeout 60 $t '[fault]' > $OUT/r/fault_$c.log 2>&1; echo "case $c rc=$?" >> $OUT/r/faults.txt; tail -2 $OUT/r/fault_$c.log >> $OUT/r/faults.txt; done
cat $OUT/r/faults.txt
ms="compute-sanitizer --tool memcheck --leak-check full --report-api-errors no --error-exitcode 3"
timeout 100 $ms $t 'watchdog on one GPU: a caller*' > $OUT/r/memcheck_capture.log 2>&1; echo "rc=$?" >> $OUT/r/memcheck_capture.log; tail -3 $OUT/r/memcheck_capture.log
timeout 150 $ms $t 'watchdog on one GPU: a collective that does not complete in time faults the context, eager and graph' > $OUT/r/memcheck_collective.log 2>&1; echo "rc=$?" >> $OUT/r/memcheck_collective.log; tail -3 $OUT/r/memcheck_collective.log
timeout 150 $ms $t '[graph]' > $OUT/r/memcheck_graph.log 2>&1; echo "rc=$?" >> $OUT/r/memcheck_graph.log; tail -3 $OUT/r/memcheck_graph.log
TIMEOUT=3 OUT=$OUT/r/cases timeout 120 bash scripts/gpu/watchdog_cases.sh /tmp/b/bin > $OUT/r/cases.log 2>&1; echo "rc=$?" >> $OUT/r/cases.log; cat $OUT/r/cases.log
for round in 1 2; do for to in 120 0; do for g in "" --graph; do
  HOSTJIT_COMM_TIMEOUT=$to timeout 60 /tmp/b/bin/hostjit run test/gpu/programs/watchdog.hir --backend cuda --ranks 1 --scalar n=4096 --scalar hold_ns=1000 --repeat 3000 --no-tier $g > $OUT/r/cost.log 2>&1
  echo "round $round timeout $to ${g:-eager}: $(grep 'calls, median' $OUT/r/cost.log)" >> $OUT/r/cost.txt
done; done; done
cat $OUT/r/cost.txt
cd $OUT && tar czf results.tgz r && rm -rf r
