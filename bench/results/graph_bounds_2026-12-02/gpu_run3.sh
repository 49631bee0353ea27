#!/usr/bin/env bash
# The shape-cycle benchmarks with and without bounds_checked; the watchdog collective test under memcheck.
export NCCL_NVLS_ENABLE=0 HOSTJIT_SOURCE_DIR=$PWD
B=/tmp/b
mkdir -p $B && tar xJf carry/b3.tar.xz -C $B
MC="compute-sanitizer --tool memcheck --leak-check full --report-api-errors no --error-exitcode 3"
M=$OUT/memcheck.txt
timeout 90 $MC $B/hostjit_gpu_tests 'watchdog on one GPU: a collective*' > $M 2>&1; echo "memcheck watchdog rc=$?" >> $M
timeout 30 $B/hostjit_gpu_tests 'watchdog on one GPU: a collective*' >> $M 2>&1; echo "plain watchdog rc=$?" >> $M
LD_LIBRARY_PATH=$B timeout 300 $B/hostjit_graph_bench --benchmark_filter='BM_ShapeCycle(Checked)?/K:(16|64)/D:(1|1000)/growing:(0|1)/rows:1/cache:0/' > $OUT/bench_cycle.txt 2>&1; echo "rc=$?" >> $OUT/bench_cycle.txt
grep -E "rc=|with message|FAILED|ERROR SUMMARY|LEAK SUMMARY|All tests" -A3 $M | head -40
grep -E "BM_|rc=" $OUT/bench_cycle.txt
