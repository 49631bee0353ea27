#!/usr/bin/env bash
# GPU run 1 at 5fb8443 (eager matmuls replayed from captured graphs): the
# GPU suite, fault cases, the hidden no-library tests, memcheck over
# [graph],[matmul],[triton],[image], the matmul bench (bare cuBLASLt,
# hj_matmul with and without replays), then the Inductor suite's ten
# matmul programs in the time left.
export NCCL_NVLS_ENABLE=0 HOSTJIT_SOURCE_DIR=$PWD HOSTJIT_CACHE_DIR=/tmp/hjcache
B=/tmp/b7
rm -rf $B /tmp/suite7 /tmp/hjcache
mkdir -p $B/py/hostjit $OUT/r && tar xJf carry/m7.tar.xz -C $B && cp $B/hostjit_py/*.so $B/py/hostjit/
cp python/hostjit/*.py $B/py/hostjit/
export PYTHONPATH=$B/py
t=$B/hostjit_gpu_tests
{ date -u; nvidia-smi -L; echo 5fb8443; } > $OUT/r/info.txt
T0=$SECONDS
timeout 150 $t '~[fault]' > $OUT/r/gpu_tests.log 2>&1; echo "rc=$?" >> $OUT/r/gpu_tests.log; echo "gpu tests: $(tail -3 $OUT/r/gpu_tests.log | tr '\n' ' ') $((SECONDS-T0))s"
grep -B5 -A25 "FAILED" $OUT/r/gpu_tests.log | head -80
for c in 0 1 2 3 4 5; do HOSTJIT_FAULT_CASE=$c timeout 40 $t '[fault]' > $OUT/r/fault_$c.log 2>&1; echo "case $c rc=$? $(tail -2 $OUT/r/fault_$c.log | tr '\n' ' ')" >> $OUT/r/faults.txt; done; cat $OUT/r/faults.txt
HOSTJIT_CUBLAS=/nonexistent/libcublas.so timeout 40 $t '[.no_cublas]' > $OUT/r/no_cublas.log 2>&1; echo "no cublas rc=$? $(tail -2 $OUT/r/no_cublas.log | tr '\n' ' ')"
HOSTJIT_CUBLASLT=/nonexistent/libcublasLt.so timeout 40 $t '[.no_cublaslt]' > $OUT/r/no_cublaslt.log 2>&1; echo "no cublaslt rc=$? $(tail -2 $OUT/r/no_cublaslt.log | tr '\n' ' ')"
T0=$SECONDS
timeout 150 compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 3 $t '[graph],[matmul],[triton],[image]' > $OUT/r/memcheck.log 2>&1; echo "memcheck rc=$? $((SECONDS-T0))s"
grep -E "ERROR SUMMARY|All tests|test cases" $OUT/r/memcheck.log | head -3
T0=$SECONDS
timeout 90 $B/hostjit_matmul_bench --benchmark_min_time=0.2 --benchmark_repetitions=3 --benchmark_report_aggregates_only=true > $OUT/r/matmul_bench.txt 2>&1; echo "matmul bench rc=$? $((SECONDS-T0))s"
grep median $OUT/r/matmul_bench.txt | cut -c1-160
LEFT=$((540 - SECONDS)); echo "suite gets ${LEFT}s"
timeout $LEFT python3 scripts/gpu/inductor_suite.py $B/hostjit /tmp/suite7 --jobs 5 gpt2_model attention swiglu_f16 gpt2_block bf16_linear_gelu dynamic_attention mlp chunk_mm dynamic_gpt2_block dynamic_mlp > $OUT/r/suite.txt 2>&1; echo "suite rc=$?"
grep -h '^RESULT' /tmp/suite7/*.log > $OUT/r/results.txt; cut -c1-520 $OUT/r/results.txt
cd $OUT && tar czf r.tgz r && rm -rf r
true
