#!/usr/bin/env bash
# GPU run 4 of stop 55 (issue 43): the KV-cache loop under graph mode's
# recapture rule at 33 (default) and 15, and with graph mode off.
export NCCL_NVLS_ENABLE=0 HOSTJIT_SOURCE_DIR=$PWD
B=/tmp/hj-bundle
if ! cmp -s "$B/commit" <(xz -dc carry/bundle.tar.xz | tar xOf - ./commit 2>/dev/null); then
  rm -rf "$B" && mkdir -p "$B" && xz -dc carry/bundle.tar.xz | tar xf - -C "$B"
fi
mkdir -p $B/py/hostjit $OUT/r && cp $B/hostjit_py/*.so python/hostjit/*.py $B/py/hostjit/
export PYTHONPATH=$B/py
C=/tmp/c55b; mkdir -p $C
export TORCHINDUCTOR_CACHE_DIR=$C/inductor TRITON_CACHE_DIR=$C/triton HOSTJIT_CACHE_DIR=$C/hostjit
for v in 33 15; do
  HOSTJIT_GRAPH_RECAPTURE_PERCENT=$v timeout 140 python3 bench/decode_gpt2.py all /tmp/kv$v --steps 192 --batches 1 --loops kv --modes hostjit --timeout 130 --warm 1
done
timeout 120 python3 bench/decode_gpt2.py all /tmp/kv33 --steps 192 --batches 1 --loops kv --modes hostjit_eager --timeout 110 --warm 1
for v in 33 15; do echo "== $v"; python3 bench/decode_gpt2.py table /tmp/kv$v; cp /tmp/kv$v/*.json $OUT/r/ 2>/dev/null; for f in /tmp/kv$v/*.json; do cp $f $OUT/r/p${v}_$(basename $f); done; done | tee $OUT/r/table.md
cd $OUT && tar czf r.tgz r && rm -rf r
