#!/usr/bin/env bash
# The 200-shape run of the dynamic MLP and GPT-2 block, then GPT-2 small's
# block and model and the programs gpu_run1.sh could not finish (bf16 data,
# the chunked linear's renamed result, a wrapper-named numel, time).
export NCCL_NVLS_ENABLE=0
B=/tmp/b
mkdir -p $B/py/hostjit && tar xJf carry/s8.tar.xz -C $B && cp $B/hostjit_py/* $B/py/hostjit/
export PYTHONPATH=$B/py
timeout 200 python3 scripts/gpu/inductor_shapes.py /tmp/shapes dynamic_mlp dynamic_gpt2_block > $OUT/shapes.txt 2>&1; echo "shapes rc=$?"
grep SHAPES $OUT/shapes.txt
timeout 370 python3 scripts/gpu/inductor_suite.py $B/hostjit /tmp/suite --jobs 4 gpt2_model gpt2_block bf16_linear_gelu \
  layer_norm_bf16 chunk_mm dynamic_mlp swiglu_f16 dynamic_gpt2_block > $OUT/suite.txt 2>&1; echo "suite rc=$?"
tail -14 $OUT/suite.txt
grep -h RESULT /tmp/suite/*.log > $OUT/results_from_logs.txt 2>/dev/null
for f in /tmp/suite/*.log; do grep -q '"error"' $f && tail -25 $f > $OUT/$(basename $f).tail; done
cd /tmp && tar czf $OUT/suite.tgz --exclude='*_cache' --exclude='*.npy' --exclude='*.so' suite shapes 2>/dev/null
true
