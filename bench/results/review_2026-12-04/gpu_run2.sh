#!/usr/bin/env bash
# Binaries of 8643cc5: memcheck over the GPU cases whose paths the review's
# fixes touch (graph mode's traced matmuls, images, Triton, fusions); first
# the many-inputs replays of 853e201.
export NCCL_NVLS_ENABLE=0 HOSTJIT_SOURCE_DIR=$PWD
B=/tmp/b
mkdir -p $B && tar xJf carry/r1.tar.xz -C $B
export LD_LIBRARY_PATH=$B
# The many-inputs replays again with the comparison's prefetch: the graph
# benchmark of 853e201, from carry/r2.tar.xz.
mkdir -p $B/r2 && tar xJf carry/r2.tar.xz -C $B/r2
LD_LIBRARY_PATH=$B/r2 timeout 60 $B/r2/hostjit_graph_bench --benchmark_filter='BM_ManyInputs' --benchmark_out=$OUT/many_inputs_prefetch.json > $OUT/many_inputs_prefetch.txt 2>&1; echo "bench rc=$?"
grep -h "^BM_" $OUT/many_inputs_prefetch.txt | sed -E 's/(jit|graph|graph_static|eval)_(cycles|instr)=[-0-9.k]+ //g'
MC="compute-sanitizer --tool memcheck --leak-check full --report-api-errors no --error-exitcode 3"
timeout 500 $MC $B/hostjit_gpu_tests '[graph],[matmul],[custom],[image],[triton],[fusion]' > $OUT/memcheck.txt 2>&1; echo "memcheck rc=$?"
grep -E "ERROR SUMMARY|LEAK SUMMARY|All tests|test cases|FAILED" $OUT/memcheck.txt | head
