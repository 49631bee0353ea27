#!/usr/bin/env bash
# hostjit_matmul_bench of ec519d9 (runtime of 49dbaa3): GPT-2 small's graph
# replay against cuGraphLaunch of the same work, three runs.
export NCCL_NVLS_ENABLE=0 HOSTJIT_SOURCE_DIR=$PWD
B=/tmp/b
mkdir -p $B && tar xJf carry/m1.tar.xz -C $B
export LD_LIBRARY_PATH=$B
for r in 1 2 3; do
  timeout 100 $B/hostjit_matmul_bench --benchmark_filter='BM_Gpt2GraphAnchor' --benchmark_out=$OUT/gpt2_anchor_run$r.json > $OUT/gpt2_anchor_run$r.txt 2>&1; echo "run $r rc=$?"
  grep -h "^BM_" $OUT/gpt2_anchor_run$r.txt
done
