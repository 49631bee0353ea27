#!/bin/bash
# Issue 24: the cost of profiling against 51ce417 (old_*), in one run, twice
# in turns: hj_launch, grid_sum through run(), fast graph replays; profiled
# and NVTX variants of the new build.
export NCCL_NVLS_ENABLE=0
export HOSTJIT_SOURCE_DIR=$PWD HOSTJIT_EXAMPLES_DIR=$PWD/examples HOSTJIT_CACHE_DIR=/tmp/hjcache LD_LIBRARY_PATH=/tmp/b
mkdir -p /tmp/b && tar xJf carry/gpu.tar.xz -C /tmp/b
B="--benchmark_repetitions=7 --benchmark_report_aggregates_only=true --benchmark_min_time=0.3"
for i in 1 2; do
  for v in old new; do
    G=/tmp/b/hostjit_gpu_bench; R=/tmp/b/hostjit_graph_bench; [ $v = old ] && G=/tmp/b/old_gpu_bench R=/tmp/b/old_graph_bench
    timeout 90 $G --benchmark_filter='BM_Launch|grid_sum_jit_run' $B 2>&1 | grep -E "median|rror" | sed "s/^/$v$i /" | tee -a $OUT/bench.txt
    timeout 90 $R --benchmark_filter='BM_Call/(graph_same_addresses|jit)(_profiled)?/K:(1|16)/' $B 2>&1 | grep -E "median|rror" | sed "s/^/$v$i /" | tee -a $OUT/bench.txt
  done
done
