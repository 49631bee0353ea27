#!/usr/bin/env bash
# GPU run 4 of stop 56 (issue 42): BM_ShapeCycle, BM_ManyInputs and the
# GPT-2 replay against cuGraphLaunch (BM_Gpt2GraphAnchor), before
# (33be246, stop 55's main) and after (ed0a4b2: FusionExecutor on the
# lowered plan, signatures on probation), from carry/bench.tar.xz (this
# stop's stripped binaries), the sides' order alternating. Then GPT-2's
# KV-cache loop (192 steps, batch 1) with HOSTJIT_GRAPH_DEVICE_UPDATES=1
# against the default (auto), from carry/bundle.tar.xz: whether graphs
# taking their updates at launch from the first build leave one build.
export NCCL_NVLS_ENABLE=0 HOSTJIT_SOURCE_DIR=$PWD HOSTJIT_CACHE_DIR=/tmp/hjcache LD_LIBRARY_PATH=$PWD/carry
B=/tmp/b56
rm -rf $B /tmp/hjcache
mkdir -p $B $OUT/r && xz -dc carry/bench.tar.xz | tar xf - -C $B
{ date -u; nvidia-smi -L; cat $B/commits; } > $OUT/r/info.txt 2>&1; cat $OUT/r/info.txt
for v in before after; do
  timeout 130 $B/$v/hostjit_graph_bench '--benchmark_filter=BM_ShapeCycle/|BM_ManyInputs/' --benchmark_repetitions=3 \
    --benchmark_min_time=0.1 --benchmark_report_aggregates_only=true --benchmark_format=json > $OUT/r/graph_$v.json 2> $OUT/r/graph_$v.err
  echo "graph bench $v rc=$?"
done
for round in 1; do
  for v in after before; do
    timeout 60 $B/$v/hostjit_matmul_bench --benchmark_filter=BM_Gpt2GraphAnchor --benchmark_repetitions=5 --benchmark_report_aggregates_only=true > $OUT/r/anchor_${v}_$round.txt 2>&1
    echo "anchor $v round $round rc=$? $(grep median $OUT/r/anchor_${v}_$round.txt | grep -o 'cuGraphLaunch_us=[0-9.]*\|graph_us=[0-9.]*' | tr '\n' ' ')"
  done
done
H=/tmp/hj-bundle
rm -rf $H && mkdir -p $H && xz -dc carry/bundle.tar.xz | tar xf - -C $H
mkdir -p $H/py/hostjit && cp $H/hostjit_py/*.so python/hostjit/*.py $H/py/hostjit/
C=/tmp/c56; mkdir -p $C
SECONDS=0
for u in auto 1; do
  PYTHONPATH=$H/py TORCHINDUCTOR_CACHE_DIR=$C/inductor TRITON_CACHE_DIR=$C/triton HOSTJIT_CACHE_DIR=$C/hostjit \
    HOSTJIT_GRAPH_DEVICE_UPDATES=$u timeout 110 python3 bench/decode_gpt2.py all /tmp/du$u --steps 192 --batches 1 --loops kv --modes hostjit --timeout 100 --warm 1
  cp /tmp/du$u/kv_hostjit_b1.json $OUT/r/du_$u.json
  echo "device updates $u: $(python3 bench/decode_gpt2.py table /tmp/du$u | tail -1)"
done
echo "decode ${SECONDS}s"
cd $OUT && tar czf r.tgz r && rm -rf r
