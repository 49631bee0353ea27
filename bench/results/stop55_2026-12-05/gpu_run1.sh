#!/usr/bin/env bash
# GPU run 1 of stop 55 (carry/bundle.tar.xz from scripts/gpu/bundle.sh):
# the 200-shape check of issue 41 after 35536f9 (resized matmuls get
# graphs of their own), then the GPU suite (scripts/gpu/verify.sh).
export NCCL_NVLS_ENABLE=0 HOSTJIT_SOURCE_DIR=$PWD HOSTJIT_CACHE_DIR=/tmp/hjcache
B=/tmp/hj-bundle
rm -rf "$B" && mkdir -p "$B" && xz -dc carry/bundle.tar.xz | tar xf - -C "$B"
mkdir -p $B/py/hostjit $OUT/r && cp $B/hostjit_py/*.so python/hostjit/*.py $B/py/hostjit/
{ date -u; nvidia-smi -L; cat $B/commit; } > $OUT/r/info.txt 2>&1
SECONDS=0
PYTHONPATH=$B/py timeout 220 python3 scripts/gpu/inductor_shapes.py /tmp/shapes dynamic_gpt2_block dynamic_attention dynamic_mlp > $OUT/r/shapes.txt 2>&1
echo "shapes rc=$? ${SECONDS}s"; grep -E "^SHAPES|differ|Error" $OUT/r/shapes.txt | cut -c1-400
OUT=$OUT/r scripts/gpu/verify.sh
cd $OUT && tar czf r.tgz r && rm -rf r
