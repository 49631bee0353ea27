#!/usr/bin/env bash
# At 0c3f427 (Triton files found by the metadata's stem), matmuls without a
# workspace again: GPT-2 small's whole model and the dynamic attention in
# the suite, then the 200-shape run of the dynamic attention.
export NCCL_NVLS_ENABLE=0
B=/tmp/b
mkdir -p $B/py/hostjit && tar xJf carry/s9.tar.xz -C $B && cp $B/hostjit_py/* $B/py/hostjit/
export PYTHONPATH=$B/py
timeout 330 python3 scripts/gpu/inductor_suite.py $B/hostjit /tmp/suite --jobs 2 gpt2_model dynamic_attention \
  > $OUT/suite.txt 2>&1; echo "suite rc=$?"
tail -6 $OUT/suite.txt
grep -h RESULT /tmp/suite/*.log > $OUT/results_from_logs.txt 2>/dev/null
for f in /tmp/suite/*.log; do grep -q '"error"' $f && tail -25 $f > $OUT/$(basename $f).tail; done
timeout 120 python3 scripts/gpu/inductor_shapes.py /tmp/shapes dynamic_attention > $OUT/shapes.txt 2>&1; echo "shapes rc=$?"
grep SHAPES $OUT/shapes.txt
cd /tmp && tar czf $OUT/suite.tgz --exclude='*_cache' --exclude='*.npy' --exclude='*.so' suite shapes 2>/dev/null
true
