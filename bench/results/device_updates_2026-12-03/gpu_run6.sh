#!/usr/bin/env bash
# Binaries of the last runtime change: the GPU suite (auto), memcheck over
# [graph], BM_DecodeModes, and the 1000-shape cycles (K = 16, 64; plain and
# bounds_checked) under auto.
export NCCL_NVLS_ENABLE=0 HOSTJIT_SOURCE_DIR=$PWD
B=/tmp/b
mkdir -p $B && tar xJf carry/b6.tar.xz -C $B
L=$OUT/summary.txt
{ nvidia-smi -L; date -u; } > $L 2>&1
timeout 120 $B/hostjit_gpu_tests '~[fault]' > $OUT/suite.txt 2>&1; echo "suite rc=$?" >> $L
MC="compute-sanitizer --tool memcheck --leak-check full --report-api-errors no --error-exitcode 3"
timeout 150 $MC $B/hostjit_gpu_tests '[graph]' > $OUT/memcheck.txt 2>&1; echo "memcheck rc=$?" >> $L
export LD_LIBRARY_PATH=$B
G=$B/hostjit_graph_bench
timeout 60 $G --benchmark_filter='BM_DecodeModes' --benchmark_out=$OUT/modes.json > $OUT/modes.txt 2>&1; echo "modes rc=$?" >> $L
timeout 150 $G --benchmark_filter='BM_ShapeCycle(Checked)?/K:(16|64)/D:1000/growing:0/rows:1/cache:0/' --benchmark_min_time=1 --benchmark_out=$OUT/cycle.json > $OUT/cycle.txt 2>&1; echo "cycle rc=$?" >> $L
grep -E "ERROR SUMMARY|LEAK SUMMARY|All tests|test cases" $OUT/suite.txt $OUT/memcheck.txt >> $L
cat $L; grep -E "FAILED" -A8 $OUT/suite.txt $OUT/memcheck.txt | head -40
grep -h "^BM_" $OUT/modes.txt $OUT/cycle.txt | sed -E 's/(jit|graph)_(cycles|instr)=[-0-9.k]+ //g'
