#!/usr/bin/env bash
# GPU run 2 of stop 56 (issue 43): GPT-2's KV-cache loop (192 steps, batch
# 1) under graph mode with signatures on probation (HOSTJIT_GRAPH_PROBATION
# 64, the default) and without (0), and the dynamic GPT-2 block and
# attention over 200 shapes (scripts/gpu/inductor_shapes.py).
# carry/bundle.tar.xz (scripts/gpu/bundle.sh) for hostjit's module.
. scripts/gpu/bundle_env.sh
mkdir -p $OUT/r
{ date -u; nvidia-smi -L; cat $B/commit; } > $OUT/r/info.txt 2>&1
C=/tmp/c56; mkdir -p $C
export TORCHINDUCTOR_CACHE_DIR=$C/inductor TRITON_CACHE_DIR=$C/triton HOSTJIT_CACHE_DIR=$C/hostjit
SECONDS=0
for v in 64 0; do
  HOSTJIT_GRAPH_PROBATION=$v timeout 150 python3 bench/decode_gpt2.py all /tmp/kv$v --steps 192 --batches 1 --loops kv --modes hostjit --timeout 140 --warm 1
done
echo "decode ${SECONDS}s"
for v in 64 0; do echo "== probation $v"; python3 bench/decode_gpt2.py table /tmp/kv$v; for f in /tmp/kv$v/*.json /tmp/kv$v/*.log; do cp $f $OUT/r/p${v}_$(basename $f); done; done | tee $OUT/r/table.md
SECONDS=0
timeout 280 python3 scripts/gpu/inductor_shapes.py /tmp/shapes dynamic_gpt2_block dynamic_attention > $OUT/r/shapes.log 2>&1
echo "shapes rc=$? ${SECONDS}s"
grep "^SHAPES" $OUT/r/shapes.log | cut -c1-600
cd $OUT && tar czf r.tgz r && rm -rf r
