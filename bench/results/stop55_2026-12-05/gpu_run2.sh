#!/usr/bin/env bash
# GPU run 2 of stop 55 (issue 42): the GPT-2 replay against cuGraphLaunch,
# before (2d8a191) and after (7e268b9), alternated over 4 rounds of 5
# repetitions, from carry/bench.tar.xz (stop 54's stripped binaries).
export NCCL_NVLS_ENABLE=0 HOSTJIT_SOURCE_DIR=$PWD HOSTJIT_CACHE_DIR=/tmp/hjcache LD_LIBRARY_PATH=$PWD/carry
B=/tmp/b55
rm -rf $B /tmp/hjcache
mkdir -p $B $OUT/r && xz -dc carry/bench.tar.xz | tar xf - -C $B
{ date -u; nvidia-smi -L; cat $B/commits; } > $OUT/r/info.txt 2>&1; cat $OUT/r/info.txt
for round in 1 2 3 4; do
  for v in before after; do
    [ $((round % 2)) = 0 ] && v=$([ $v = before ] && echo after || echo before)
    timeout 70 $B/$v/hostjit_matmul_bench --benchmark_filter=BM_Gpt2GraphAnchor --benchmark_repetitions=5 --benchmark_report_aggregates_only=true > $OUT/r/anchor_${v}_$round.txt 2>&1
    echo "anchor $v round $round rc=$? $(grep median $OUT/r/anchor_${v}_$round.txt | grep -o 'cuGraphLaunch_us=[0-9.]*\|graph_us=[0-9.]*' | tr '\n' ' ')"
  done
done
cd $OUT && tar czf r.tgz r && rm -rf r
