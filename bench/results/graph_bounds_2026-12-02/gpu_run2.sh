#!/usr/bin/env bash
# GPU suite, fault cases and memcheck of the bounds_checked/reserve change; the graph benchmarks.
export NCCL_NVLS_ENABLE=0 HOSTJIT_SOURCE_DIR=$PWD
B=/tmp/b
mkdir -p $B && tar xJf carry/b2.tar.xz -C $B
L=$OUT/tests.txt
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv; date -u; } > $L 2>&1
timeout 200 $B/hostjit_gpu_tests '~[fault]' >> $L 2>&1; echo "suite rc=$?" >> $L
for c in 0 1 2 3 4 5; do timeout 30 env HOSTJIT_FAULT_CASE=$c $B/hostjit_gpu_tests '[fault]' > /tmp/f.txt 2>&1; echo "fault case $c rc=$? $(tail -2 /tmp/f.txt | tr '\n' ' ')" >> $L; done
$B/hostjit_gpu_tests 'graph mode on the GPU: bounds_checked*' -s 2>&1 | grep -A2 "warning" >> $L
MC="compute-sanitizer --tool memcheck --leak-check full --report-api-errors no --error-exitcode 3"
M=$OUT/memcheck.txt
timeout 200 $MC $B/hostjit_gpu_tests '[graph]' > $M 2>&1; echo "memcheck graph rc=$?" >> $M
timeout 60 $MC $B/hostjit_gpu_tests 'watchdog on one GPU: a collective*' >> $M 2>&1; echo "memcheck watchdog rc=$?" >> $M
grep -E "ERROR SUMMARY|LEAK SUMMARY|rc=|All tests|test cases" $M >> $L
LD_LIBRARY_PATH=$B timeout 170 $B/hostjit_graph_bench --benchmark_filter='BM_DecodePass' --benchmark_repetitions=3 > $OUT/bench_decode.txt 2>&1; echo "rc=$?" >> $OUT/bench_decode.txt
LD_LIBRARY_PATH=$B timeout 150 $B/hostjit_graph_bench --benchmark_filter='BM_ShapeCycle(Checked)?/K:(16|64)/D:(1|1000)/growing:(0|1)/rows:1/cache:0$' > $OUT/bench_cycle.txt 2>&1; echo "rc=$?" >> $OUT/bench_cycle.txt
grep -E "rc=|suite|fault|ERROR SUMMARY|All tests|FAILED|warning|graph_builds" $L | head -40
grep -E "median|rc=" $OUT/bench_decode.txt; grep -E "BM_|rc=" $OUT/bench_cycle.txt
