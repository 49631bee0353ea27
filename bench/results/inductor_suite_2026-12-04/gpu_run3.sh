#!/usr/bin/env bash
# Extern matmuls now given PyTorch's cuBLAS workspace by the recorder: the
# programs with matmuls again, GPT-2 small's model (the recorder finds a
# variant whose files Triton named other than the wrapper), and the
# 200-shape run of the dynamic MLP and attention.
export NCCL_NVLS_ENABLE=0
B=/tmp/b
mkdir -p $B/py/hostjit && tar xJf carry/s8.tar.xz -C $B && cp $B/hostjit_py/* $B/py/hostjit/
export PYTHONPATH=$B/py
timeout 400 python3 scripts/gpu/inductor_suite.py $B/hostjit /tmp/suite --jobs 4 gpt2_model gpt2_block mlp attention \
  chunk_mm dynamic_mlp bf16_linear_gelu swiglu_f16 dynamic_attention > $OUT/suite.txt 2>&1; echo "suite rc=$?"
tail -14 $OUT/suite.txt
grep -h RESULT /tmp/suite/*.log > $OUT/results_from_logs.txt 2>/dev/null
for f in /tmp/suite/*.log; do grep -q '"error"' $f && tail -25 $f > $OUT/$(basename $f).tail; done
timeout 150 python3 scripts/gpu/inductor_shapes.py /tmp/shapes dynamic_attention dynamic_mlp > $OUT/shapes.txt 2>&1; echo "shapes rc=$?"
grep SHAPES $OUT/shapes.txt
cd /tmp && tar czf $OUT/suite.tgz --exclude='*_cache' --exclude='*.npy' --exclude='*.so' suite shapes 2>/dev/null
true
