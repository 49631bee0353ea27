#!/usr/bin/env bash
# GPU run 5 of stop 56 (issue 42), run 4 cut to what the device time left
# allows: BM_ShapeCycle, BM_ManyInputs and the GPT-2 replay against
# cuGraphLaunch (BM_Gpt2GraphAnchor), before (33be246, stop 55's main) and
# after (ed0a4b2: FusionExecutor on the lowered plan, signatures on
# probation), from carry/bench.tar.xz (this stop's stripped binaries).
export NCCL_NVLS_ENABLE=0 HOSTJIT_SOURCE_DIR=$PWD HOSTJIT_CACHE_DIR=/tmp/hjcache LD_LIBRARY_PATH=$PWD/carry
B=/tmp/b56
rm -rf $B /tmp/hjcache
mkdir -p $B $OUT/r && xz -dc carry/bench.tar.xz | tar xf - -C $B
{ date -u; nvidia-smi -L; cat $B/commits; } > $OUT/r/info.txt 2>&1; cat $OUT/r/info.txt
for v in before after; do
  timeout 100 $B/$v/hostjit_graph_bench '--benchmark_filter=BM_ShapeCycle/|BM_ManyInputs/' --benchmark_repetitions=3 \
    --benchmark_min_time=0.05 --benchmark_report_aggregates_only=true --benchmark_format=json > $OUT/r/graph_$v.json 2> $OUT/r/graph_$v.err
  echo "graph bench $v rc=$?"
done
for v in after before; do
  timeout 40 $B/$v/hostjit_matmul_bench --benchmark_filter=BM_Gpt2GraphAnchor --benchmark_repetitions=5 --benchmark_report_aggregates_only=true > $OUT/r/anchor_$v.txt 2>&1
  echo "anchor $v rc=$? $(grep median $OUT/r/anchor_$v.txt | grep -o 'cuGraphLaunch_us=[0-9.]*\|graph_us=[0-9.]*' | tr '\n' ' ')"
done
cd $OUT && tar czf r.tgz r && rm -rf r
