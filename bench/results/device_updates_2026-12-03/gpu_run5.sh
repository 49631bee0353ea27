#!/usr/bin/env bash
# Binaries of the BM_DecodeModes commit: the decode pass under auto, 1 and 0
# interleaved; the falling-behind test outside and under memcheck.
export NCCL_NVLS_ENABLE=0 HOSTJIT_SOURCE_DIR=$PWD
B=/tmp/b
mkdir -p $B && tar xJf carry/b5.tar.xz -C $B
L=$OUT/summary.txt
{ nvidia-smi -L; date -u; } > $L 2>&1
T='graph mode on the GPU: a graph whose device falls behind*'
timeout 60 $B/hostjit_gpu_tests "$T" > $OUT/behind.txt 2>&1; echo "behind rc=$?" >> $L
MC="compute-sanitizer --tool memcheck --leak-check full --report-api-errors no --error-exitcode 3"
timeout 150 $MC $B/hostjit_gpu_tests "$T" > $OUT/behind_memcheck.txt 2>&1; echo "behind memcheck rc=$?" >> $L
LD_LIBRARY_PATH=$B timeout 150 $B/hostjit_graph_bench --benchmark_filter='BM_DecodeModes' --benchmark_out=$OUT/modes.json > $OUT/modes.txt 2>&1; echo "modes rc=$?" >> $L
grep -E "ERROR SUMMARY|LEAK SUMMARY|All tests|test cases" $OUT/behind*.txt >> $L
cat $L; grep -E "FAILED" -A8 $OUT/behind*.txt | head -30
grep -h "^BM_" $OUT/modes.txt
