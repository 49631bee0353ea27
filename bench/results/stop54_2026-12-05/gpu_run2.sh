#!/usr/bin/env bash
# GPU run 2 of stop 54 (bundle of carry/bundle.tar.xz, unpacked by
# verify.sh in run 1 or here): the 200-shape check at HEAD under graph
# mode's recapture rule (issue 41), then the decode bench's static-cache
# loop, reduce-overhead against hostjit, and hostjit's KV loop over the
# same lengths (issue 43).
export NCCL_NVLS_ENABLE=0 HOSTJIT_SOURCE_DIR=$PWD HOSTJIT_CACHE_DIR=/tmp/hjcache
B=/tmp/hj-bundle
if ! cmp -s "$B/commit" <(xz -dc carry/bundle.tar.xz | tar xOf - ./commit 2>/dev/null); then
  rm -rf "$B" && mkdir -p "$B" && xz -dc carry/bundle.tar.xz | tar xf - -C "$B"
fi
mkdir -p $B/py/hostjit $OUT/r && cp $B/hostjit_py/*.so python/hostjit/*.py $B/py/hostjit/
export PYTHONPATH=$B/py
{ date -u; nvidia-smi -L; cat $B/commit; } > $OUT/r/info.txt 2>&1
SECONDS=0
timeout 200 python3 scripts/gpu/inductor_shapes.py /tmp/shapes dynamic_gpt2_block dynamic_attention dynamic_mlp > $OUT/r/shapes.txt 2>&1
echo "shapes rc=$? ${SECONDS}s"; grep -E "^SHAPES|differ|Error" $OUT/r/shapes.txt | cut -c1-400
D=/tmp/dstatic
rm -rf $D
SECONDS=0
timeout 250 python3 bench/decode_gpt2.py all $D --steps 256 --batches 1 --loops static --modes reduce_overhead,hostjit --timeout 120 > $OUT/r/decode.txt 2>&1
timeout 110 python3 bench/decode_gpt2.py all $D --steps 256 --batches 1 --loops kv --modes hostjit --timeout 100 >> $OUT/r/decode.txt 2>&1
echo "decode ${SECONDS}s"; cut -c1-300 $OUT/r/decode.txt | tail -8
python3 bench/decode_gpt2.py table $D > $OUT/r/table.md 2>&1; cat $OUT/r/table.md
cp $D/*.json $D/*.log $OUT/r/ 2>/dev/null
cp -r /tmp/shapes $OUT/r/shapes 2>/dev/null
true
