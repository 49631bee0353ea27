#!/usr/bin/env bash
# GPU run 3 of stop 54 (issue 42, no behaviour change intended): the graph
# benchmarks of the typed operations' "before" (2d8a191, before issue 42's
# first change) against HEAD, stripped, in carry/bench.tar.xz, alternated
# before, after, before, after in one run.
export NCCL_NVLS_ENABLE=0 HOSTJIT_SOURCE_DIR=$PWD HOSTJIT_CACHE_DIR=/tmp/hjcache LD_LIBRARY_PATH=$PWD/carry
B=/tmp/b54
rm -rf $B /tmp/hjcache
mkdir -p $B $OUT/r && xz -dc carry/bench.tar.xz | tar xf - -C $B
{ date -u; nvidia-smi -L; cat $B/commits; } > $OUT/r/info.txt 2>&1; cat $OUT/r/info.txt
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
true
