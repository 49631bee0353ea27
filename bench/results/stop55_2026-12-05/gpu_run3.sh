#!/usr/bin/env bash
# GPU run 3 of stop 55 (issue 43, an experiment): GPT-2's decode loops
# with Inductor's matmuls as Triton templates (max_autotune_gemm, Triton
# backend only), so that every operation of a step is a kernel whose node
# graph mode sets at launch. torch.compile's default with the same config
# is the reference; carry/bundle.tar.xz for hostjit's module.
export NCCL_NVLS_ENABLE=0 HOSTJIT_SOURCE_DIR=$PWD
B=/tmp/hj-bundle
if ! cmp -s "$B/commit" <(xz -dc carry/bundle.tar.xz | tar xOf - ./commit 2>/dev/null); then
  rm -rf "$B" && mkdir -p "$B" && xz -dc carry/bundle.tar.xz | tar xf - -C "$B"
fi
mkdir -p $B/py/hostjit $OUT/r && cp $B/hostjit_py/*.so python/hostjit/*.py $B/py/hostjit/
export PYTHONPATH=$B/py
{ date -u; nvidia-smi -L; cat $B/commit; } > $OUT/r/info.txt 2>&1
C=/tmp/c55; rm -rf $C; mkdir -p $C
export TORCHINDUCTOR_CACHE_DIR=$C/inductor TRITON_CACHE_DIR=$C/triton HOSTJIT_CACHE_DIR=$C/hostjit
export DECODE_INDUCTOR="max_autotune_gemm=True;max_autotune_gemm_backends=TRITON"
D=/tmp/d55
rm -rf $D
SECONDS=0
timeout 210 python3 bench/decode_gpt2.py all $D --steps 96 --batches 1 --loops grow --modes inductor --timeout 200 --warm 1
timeout 160 python3 bench/decode_gpt2.py all $D --steps 96 --batches 1 --loops grow --modes hostjit --timeout 150 --warm 1
timeout 130 python3 bench/decode_gpt2.py all $D --steps 128 --batches 1 --loops kv --modes hostjit --timeout 120 --warm 1
echo "decode ${SECONDS}s"
python3 bench/decode_gpt2.py table $D > $OUT/r/table.md 2>&1; cat $OUT/r/table.md
grep -h "through Inductor\|refused\|Unsupported\|Error" $D/*.log | sort | uniq -c | sort -rn | head -12 | cut -c1-400
cp $D/*.json $D/*.log $OUT/r/ 2>/dev/null
cd $OUT && tar czf r.tgz r && rm -rf r
