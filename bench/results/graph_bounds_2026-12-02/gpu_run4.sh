#!/usr/bin/env bash
# Final check: GPU suite, fault cases, memcheck over graph/custom/matmul; the decode pass and shape cycles.
export NCCL_NVLS_ENABLE=0 HOSTJIT_SOURCE_DIR=$PWD
B=/tmp/b
mkdir -p $B && tar xJf carry/b4.tar.xz -C $B
L=$OUT/tests.txt
{ nvidia-smi -L; date -u; } > $L 2>&1
timeout 150 $B/hostjit_gpu_tests '~[fault]' >> $L 2>&1; echo "suite rc=$?" >> $L
for c in 0 1 2 3 4 5; do timeout 30 env HOSTJIT_FAULT_CASE=$c $B/hostjit_gpu_tests '[fault]' > /tmp/f.txt 2>&1; echo "fault case $c rc=$? $(tail -2 /tmp/f.txt | tr '\n' ' ')" >> $L; done
MC="compute-sanitizer --tool memcheck --leak-check full --report-api-errors no --error-exitcode 3"
timeout 200 $MC $B/hostjit_gpu_tests '[graph],[custom],[matmul]' > $OUT/memcheck.txt 2>&1; echo "memcheck rc=$?" >> $OUT/memcheck.txt
grep -E "ERROR SUMMARY|LEAK SUMMARY|rc=|All tests|test cases" $OUT/memcheck.txt >> $L
LD_LIBRARY_PATH=$B timeout 110 $B/hostjit_graph_bench --benchmark_filter='BM_DecodePass' --benchmark_repetitions=3 > $OUT/bench_decode.txt 2>&1; echo "rc=$?" >> $OUT/bench_decode.txt
LD_LIBRARY_PATH=$B timeout 240 $B/hostjit_graph_bench --benchmark_filter='BM_ShapeCycle(Checked)?/K:(16|64)/D:1000/growing:(0|1)/rows:1/cache:0/' --benchmark_min_time=1 > $OUT/bench_cycle.txt 2>&1; echo "rc=$?" >> $OUT/bench_cycle.txt
grep -E "rc=|suite|fault|ERROR SUMMARY|LEAK|All tests|FAILED|test cases" $L | head -30
grep -E "median|rc=" $OUT/bench_decode.txt; grep -E "BM_|rc=" $OUT/bench_cycle.txt
