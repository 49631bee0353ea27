#!/usr/bin/env bash
# Device updates, first check: the probe (updates reach the same launch;
# host updates and device-given values), the graph tests under auto and
# with every graph built for device updates, memcheck, BM_ShapeUpdate.
export NCCL_NVLS_ENABLE=0 HOSTJIT_SOURCE_DIR=$PWD
B=/tmp/b
mkdir -p $B && tar xJf carry/b1.tar.xz -C $B
L=$OUT/summary.txt
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; date -u; git log -1 --format=%h 2>/dev/null; } > $L 2>&1
nvcc -O2 -std=c++17 -o /tmp/probe scripts/gpu/graph_device_update_probe.cu -lcuda -lnvrtc > $OUT/probe.txt 2>&1
timeout 90 /tmp/probe /usr/local/cuda/lib64/libcudadevrt.a >> $OUT/probe.txt 2>&1; echo "probe rc=$?" >> $OUT/probe.txt
timeout 120 $B/hostjit_gpu_tests '[graph]' > $OUT/graph_auto.txt 2>&1; echo "graph auto rc=$?" >> $L
HOSTJIT_GRAPH_DEVICE_UPDATES=1 timeout 200 $B/hostjit_gpu_tests '~[fault]' > $OUT/suite_device1.txt 2>&1; echo "suite device=1 rc=$?" >> $L
MC="compute-sanitizer --tool memcheck --leak-check full --report-api-errors no --error-exitcode 3"
HOSTJIT_GRAPH_DEVICE_UPDATES=1 timeout 150 $MC $B/hostjit_gpu_tests '[graph]' > $OUT/memcheck_device1.txt 2>&1; echo "memcheck device=1 rc=$?" >> $L
LD_LIBRARY_PATH=$B timeout 100 $B/hostjit_graph_bench --benchmark_filter='BM_ShapeUpdate' > $OUT/bench_update.txt 2>&1; echo "bench rc=$?" >> $L
grep -E "ERROR SUMMARY|LEAK SUMMARY|All tests|test cases" $OUT/*.txt >> $L
cat $L; grep -E "FAILED|REQUIRE|CHECK\(" -A3 $OUT/graph_auto.txt $OUT/suite_device1.txt | head -60
cat $OUT/probe.txt | tail -60; grep -E "BM_" $OUT/bench_update.txt
