#!/usr/bin/env bash
# The graph tests (auto), BM_ShapeUpdate, and the K = 16 shape cycle over
# D distinct shapes under HOSTJIT_GRAPH_DEVICE_UPDATES auto and 0.
export NCCL_NVLS_ENABLE=0 HOSTJIT_SOURCE_DIR=$PWD
B=/tmp/b
mkdir -p $B && tar xJf carry/b2.tar.xz -C $B
L=$OUT/summary.txt
{ nvidia-smi -L; date -u; } > $L 2>&1
timeout 100 $B/hostjit_gpu_tests '[graph]' > $OUT/graph_auto.txt 2>&1; echo "graph auto rc=$?" >> $L
export LD_LIBRARY_PATH=$B
timeout 90 $B/hostjit_graph_bench --benchmark_filter='BM_ShapeUpdate' --benchmark_repetitions=3 --benchmark_out=$OUT/update.json > $OUT/bench_update.txt 2>&1; echo "update rc=$?" >> $L
F='BM_ShapeCycle/K:16/D:[0-9]+/growing:0/rows:1/cache:0/'
timeout 170 $B/hostjit_graph_bench --benchmark_filter="$F" --benchmark_min_time=1 --benchmark_out=$OUT/cycle16_auto.json > $OUT/cycle16_auto.txt 2>&1; echo "cycle16 auto rc=$?" >> $L
HOSTJIT_GRAPH_DEVICE_UPDATES=0 timeout 170 $B/hostjit_graph_bench --benchmark_filter="$F" --benchmark_min_time=1 --benchmark_out=$OUT/cycle16_host.json > $OUT/cycle16_host.txt 2>&1; echo "cycle16 host rc=$?" >> $L
grep -E "All tests|test cases" $OUT/graph_auto.txt >> $L
cat $L; grep -E "FAILED" -A6 $OUT/graph_auto.txt | head -30
grep -E "median" $OUT/bench_update.txt; grep -E "BM_" $OUT/cycle16_auto.txt $OUT/cycle16_host.txt | sed -E 's/(changing|same|jit|graph)_(cycles|instr)=[-0-9.k]+ //g'
