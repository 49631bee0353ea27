#!/usr/bin/env bash
# GPU run 2: the recorder's host scalars (.item() of a 0-d CPU tensor) on
# the dynamic GPT-2 block, the shape script recording at the first size,
# and where graph mode's time goes over 200 shapes. Module and CLI of
# 5588142 (C++ unchanged since); Python files from the working tree.
export NCCL_NVLS_ENABLE=0
B=/tmp/b R=bench/results/inductor_import_2026-12-05
mkdir -p $B/py/hostjit $OUT/r && tar xJf carry/m2.tar.xz -C $B && cp $B/hostjit_py/*.so $B/py/hostjit/
cp python/hostjit/__init__.py python/hostjit/inductor.py $B/py/hostjit/
export PYTHONPATH=$B/py
SECONDS=0
timeout 200 python3 scripts/gpu/inductor_suite.py $B/hostjit /tmp/suite --jobs 2 dynamic_gpt2_block dynamic_attention > $OUT/r/suite.txt 2>&1; echo "suite rc=$? ${SECONDS}s"
grep RESULT $OUT/r/suite.txt | cut -c1-900
for f in /tmp/suite/*.log; do grep -q '"error"' $f && tail -25 $f > $OUT/r/$(basename $f).tail; done
SECONDS=0
timeout 230 python3 scripts/gpu/inductor_shapes.py /tmp/shapes > $OUT/r/shapes.txt 2>&1; echo "shapes rc=$? ${SECONDS}s"
grep SHAPES $OUT/r/shapes.txt | cut -c1-700
SECONDS=0
timeout 150 python3 $R/shape_rounds.py /tmp/rounds dynamic_ln_gelu dynamic_mlp > $OUT/r/rounds.txt 2>&1; echo "rounds rc=$? ${SECONDS}s"
grep ROUNDS $OUT/r/rounds.txt
cd $OUT && tar czf r.tgz r && rm -rf r
true
