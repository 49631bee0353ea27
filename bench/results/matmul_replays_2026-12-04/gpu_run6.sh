#!/usr/bin/env bash
# GPU run 6: Inductor's Python wrapper's host time for GPT-2 small's whole
# model, five rounds in one process (wrapper_rounds.py), to see how much
# the figure the eager target divides varies (hostjit's JIT: 569.31 and
# 569.24 us in runs 1 and 2).
export NCCL_NVLS_ENABLE=0 TORCHINDUCTOR_CACHE_DIR=/tmp/ic6 TRITON_CACHE_DIR=/tmp/tc6
mkdir -p $OUT/r
{ date -u; nvidia-smi -L; } > $OUT/r/info.txt
timeout 280 python3 bench/results/matmul_replays_2026-12-04/wrapper_rounds.py gpt2_model 5 > $OUT/r/wrapper_rounds.txt 2>&1; echo "rc=$?"
tail -7 $OUT/r/wrapper_rounds.txt
cd $OUT && tar czf r.tgz r && rm -rf r
true
