#!/usr/bin/env bash
# GPU run 3 of stop 56 (issue 43): the KV-cache loop (192 steps, batch 1)
# with probation on (64) and off (0), alternating, at the default cache of
# 1024 signatures (never full in 192 steps) and at HOSTJIT_GRAPH_CACHE=96
# (full from step 96: a loop longer than the cache). Caches warm from run 2.
. scripts/gpu/bundle_env.sh
mkdir -p $OUT/r
{ date -u; nvidia-smi -L; cat $B/commit; } > $OUT/r/info.txt 2>&1
C=/tmp/c56; mkdir -p $C
export TORCHINDUCTOR_CACHE_DIR=$C/inductor TRITON_CACHE_DIR=$C/triton HOSTJIT_CACHE_DIR=$C/hostjit
SECONDS=0
run() {  # NAME CACHE PROBATION
  HOSTJIT_GRAPH_CACHE=$2 HOSTJIT_GRAPH_PROBATION=$3 timeout 100 python3 bench/decode_gpt2.py all /tmp/$1 --steps 192 --batches 1 --loops kv --modes hostjit --timeout 95 --warm 1
}
run w0 0 64 >/dev/null  # warm-up: compiles into the caches
for i in 1 2; do run a0_$i 0 0; run a64_$i 0 64; run b64_$i 96 64; run b0_$i 96 0; done
echo "decode ${SECONDS}s"
for d in a0_1 a64_1 b64_1 b0_1 a0_2 a64_2 b64_2 b0_2; do echo "== $d"; python3 bench/decode_gpt2.py table /tmp/$d | tail -1; cp /tmp/$d/kv_hostjit_b1.json $OUT/r/$d.json; done | tee $OUT/r/table.md
cd $OUT && tar czf r.tgz r && rm -rf r
