#!/usr/bin/env bash
# Binaries of ea20fd5 (the last runtime change): the GPU suite (auto), the
# fault cases, memcheck over [graph]; the decode pass under auto and 0;
# the K = 16 and 64 scattered cycles of 1000 shapes under auto.
export NCCL_NVLS_ENABLE=0 HOSTJIT_SOURCE_DIR=$PWD
B=/tmp/b
mkdir -p $B && tar xJf carry/b4.tar.xz -C $B
L=$OUT/summary.txt
{ nvidia-smi -L; date -u; } > $L 2>&1
timeout 120 $B/hostjit_gpu_tests '~[fault]' > $OUT/suite.txt 2>&1; echo "suite rc=$?" >> $L
for c in 0 1 2 3 4 5; do timeout 20 env HOSTJIT_FAULT_CASE=$c $B/hostjit_gpu_tests '[fault]' > /tmp/f.txt 2>&1; echo "fault case $c rc=$? $(tail -2 /tmp/f.txt | tr '\n' ' ')" >> $L; done
MC="compute-sanitizer --tool memcheck --leak-check full --report-api-errors no --error-exitcode 3"
timeout 130 $MC $B/hostjit_gpu_tests '[graph]' > $OUT/memcheck.txt 2>&1; echo "memcheck rc=$?" >> $L
export LD_LIBRARY_PATH=$B
G=$B/hostjit_graph_bench
for mode in auto 0; do
  HOSTJIT_GRAPH_DEVICE_UPDATES=$mode timeout 45 $G --benchmark_filter='BM_DecodePass/K:(16|64)/way:[013]' --benchmark_repetitions=3 --benchmark_out=$OUT/decode_$mode.json > $OUT/decode_$mode.txt 2>&1; echo "decode $mode rc=$?" >> $L
done
timeout 80 $G --benchmark_filter='BM_ShapeCycle/K:(16|64)/D:1000/growing:0/rows:1/cache:0/' --benchmark_min_time=1 --benchmark_out=$OUT/cycle_auto.json > $OUT/cycle_auto.txt 2>&1; echo "cycle auto rc=$?" >> $L
grep -E "ERROR SUMMARY|LEAK SUMMARY|All tests|test cases" $OUT/suite.txt $OUT/memcheck.txt >> $L
cat $L; grep -E "FAILED" -A8 $OUT/suite.txt $OUT/memcheck.txt | head -40
grep -h "median" $OUT/decode_auto.txt; echo ---; grep -h median $OUT/decode_0.txt; grep -h "^BM_" $OUT/cycle_auto.txt | sed -E 's/(jit|graph)_(cycles|instr)=[-0-9.k]+ //g'
