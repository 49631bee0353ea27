#!/usr/bin/env bash
# GPU run 5 at 0fcbb49 (issue 42 continued: typed graph operations, UpdatePolicy,
# trace and replay calls apart, RecordedPath, OpOrder, CallOutcome; no
# behaviour change intended): the GPU suite, fault cases, memcheck over
# [graph],[matmul],[triton],[image]; then the graph benchmarks before
# (2d8a191 for hostjit_graph_bench, 5fb8443 for hostjit_matmul_bench, both
# before the change) and after, alternated twice in one run.
export NCCL_NVLS_ENABLE=0 HOSTJIT_SOURCE_DIR=$PWD HOSTJIT_CACHE_DIR=/tmp/hjcache LD_LIBRARY_PATH=$PWD/carry
B=/tmp/b9
rm -rf $B /tmp/hjcache
mkdir -p $B $OUT/r && tar xJf carry/m9.tar.xz -C $B
t=$B/after/hostjit_gpu_tests
{ date -u; nvidia-smi -L; echo 0fcbb49; } > $OUT/r/info.txt
T0=$SECONDS
timeout 150 $t '~[fault]' > $OUT/r/gpu_tests.log 2>&1; echo "rc=$?" >> $OUT/r/gpu_tests.log; echo "gpu tests: $(tail -3 $OUT/r/gpu_tests.log | tr '\n' ' ') $((SECONDS-T0))s"
grep -B5 -A25 "FAILED" $OUT/r/gpu_tests.log | head -60
for c in 0 1 2 3 4 5; do HOSTJIT_FAULT_CASE=$c timeout 40 $t '[fault]' > $OUT/r/fault_$c.log 2>&1; echo "case $c rc=$? $(tail -2 $OUT/r/fault_$c.log | tr '\n' ' ')" >> $OUT/r/faults.txt; done; cat $OUT/r/faults.txt
T0=$SECONDS
timeout 150 compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 3 $t '[graph],[matmul],[triton],[image]' > $OUT/r/memcheck.log 2>&1; echo "memcheck rc=$? $((SECONDS-T0))s"
grep -E "ERROR SUMMARY|All tests|test cases" $OUT/r/memcheck.log | head -3
F='BM_ShapeCycle/K:16/D:1000/growing:(0|1)/rows:1/cache:0/|BM_ManyInputs/M:(1|300)/'
for round in 1 2; do
  for v in before after; do
    T0=$SECONDS
    timeout 100 $B/$v/hostjit_graph_bench --benchmark_filter="$F" --benchmark_repetitions=3 --benchmark_report_aggregates_only=true --benchmark_format=json --benchmark_out=$OUT/r/graph_${v}_$round.json > $OUT/r/graph_${v}_$round.txt 2>&1
    echo "graph $v round $round rc=$? $((SECONDS-T0))s"; grep median $OUT/r/graph_${v}_$round.txt | cut -c1-150
    T0=$SECONDS
    timeout 60 $B/$v/hostjit_matmul_bench --benchmark_filter=BM_Gpt2GraphAnchor --benchmark_repetitions=3 --benchmark_report_aggregates_only=true > $OUT/r/anchor_${v}_$round.txt 2>&1
    echo "anchor $v round $round rc=$? $((SECONDS-T0))s"; grep median $OUT/r/anchor_${v}_$round.txt | cut -c1-150
  done
done
cd $OUT && tar czf r.tgz r && rm -rf r
true
