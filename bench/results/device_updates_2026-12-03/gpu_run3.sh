#!/usr/bin/env bash
# Binaries of d26671d: the GPU suite under the default (auto); the shape
# cycles, the decode pass and BM_ShapeUpdate under auto and 0, one process
# each, alternating.
export NCCL_NVLS_ENABLE=0 HOSTJIT_SOURCE_DIR=$PWD
B=/tmp/b
mkdir -p $B && tar xJf carry/b3.tar.xz -C $B
L=$OUT/summary.txt
{ nvidia-smi -L; date -u; } > $L 2>&1
timeout 100 $B/hostjit_gpu_tests '~[fault]' > $OUT/suite_auto.txt 2>&1; echo "suite auto rc=$?" >> $L
export LD_LIBRARY_PATH=$B
G=$B/hostjit_graph_bench
F16='BM_ShapeCycle/K:16/D:[0-9]+/growing:0/rows:1/cache:0/'
F64='BM_ShapeCycle/K:(16|64)/D:1000/growing:1/rows:1/cache:0/|BM_ShapeCycle/K:64/D:1000/growing:0/rows:1/cache:0/'
for mode in auto 0; do
  export HOSTJIT_GRAPH_DEVICE_UPDATES=$mode
  timeout 75 $G --benchmark_filter="$F16" --benchmark_min_time=1 --benchmark_out=$OUT/cycle16_$mode.json > $OUT/cycle16_$mode.txt 2>&1; echo "cycle16 $mode rc=$?" >> $L
  timeout 110 $G --benchmark_filter="$F64" --benchmark_min_time=1 --benchmark_out=$OUT/cycle64_$mode.json > $OUT/cycle64_$mode.txt 2>&1; echo "cycle64 $mode rc=$?" >> $L
  timeout 40 $G --benchmark_filter='BM_DecodePass/K:(16|64)/way:[013]' --benchmark_repetitions=3 --benchmark_out=$OUT/decode_$mode.json > $OUT/decode_$mode.txt 2>&1; echo "decode $mode rc=$?" >> $L
done
unset HOSTJIT_GRAPH_DEVICE_UPDATES
grep -E "All tests|test cases" $OUT/suite_auto.txt >> $L
cat $L; grep -E "FAILED" -A6 $OUT/suite_auto.txt | head -30
S='s/(changing|same|jit|graph)_(cycles|instr)=[-0-9.k]+ //g'
grep -hE "^BM_" $OUT/cycle16_*.txt $OUT/cycle64_*.txt | sed -E "$S"; grep -hE "median" $OUT/decode_*.txt
