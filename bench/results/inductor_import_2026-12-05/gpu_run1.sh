#!/usr/bin/env bash
# GPU run 1 at 5588142: the suite, fault cases and memcheck that stop 47
# left undone (cuBLASLt alignment, the dlopen helper, typed step::Matmul),
# and two diagnoses for issue 41.
export NCCL_NVLS_ENABLE=0 HOSTJIT_SOURCE_DIR=$PWD HOSTJIT_CACHE_DIR=/tmp/hjcache
mkdir -p /tmp/b $OUT/r && tar xJf carry/g1.tar.xz -C /tmp/b
{ date -u; nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; echo 5588142; } > $OUT/r/info.txt
t=/tmp/b/hostjit_gpu_tests
timeout 240 $t '~[fault]' > $OUT/r/gpu_tests.log 2>&1; echo "rc=$?" >> $OUT/r/gpu_tests.log; tail -3 $OUT/r/gpu_tests.log
for c in 0 1 2 3 4 5; do HOSTJIT_FAULT_CASE=$c timeout 60 $t '[fault]' > $OUT/r/fault_$c.log 2>&1; echo "case $c rc=$?" >> $OUT/r/faults.txt; tail -2 $OUT/r/fault_$c.log >> $OUT/r/faults.txt; done
cat $OUT/r/faults.txt
SECONDS=0
timeout 200 python3 bench/results/inductor_import_2026-12-05/diag.py $OUT/r/diag > $OUT/r/diag.log 2>&1; echo "diag rc=$?"; tail -5 $OUT/r/diag.log
rm -rf $OUT/r/diag/*/ind $OUT/r/diag/*/tri
echo "diag took $SECONDS s"
timeout 330 compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 3 $t '[graph],[matmul],[triton],[image]' > $OUT/r/memcheck.log 2>&1; echo "memcheck rc=$?"
grep -E "ERROR SUMMARY|All tests|test cases" $OUT/r/memcheck.log | head -4
true
