#!/usr/bin/env bash
# GPU run 4: run 3's suite again (it ran past its 260 s): the matmul
# programs of the Inductor suite with cuBLAS for plain matmuls and
# PyTorch's workspaces; each program's RESULT taken from its own log.
# Run 5 is this script with RUN=5 LIMIT=430 and PROGRAMS without gpt2_model
# (run 4 found /tmp/suite of run 3 on the machine, still warm).
export NCCL_NVLS_ENABLE=0
B=/tmp/b
mkdir -p $B/py/hostjit $OUT/r && tar xJf carry/m3.tar.xz -C $B && cp $B/hostjit_py/*.so $B/py/hostjit/
cp python/hostjit/__init__.py python/hostjit/inductor.py $B/py/hostjit/
export PYTHONPATH=$B/py
RUN=${RUN:-4}; PROGRAMS=${PROGRAMS:-gpt2_model mlp attention chunk_mm swiglu_f16 bf16_linear_gelu dynamic_mlp dynamic_attention gpt2_block dynamic_gpt2_block}
SECONDS=0
timeout ${LIMIT:-540} python3 scripts/gpu/inductor_suite.py $B/hostjit /tmp/suite_$RUN --jobs 5 $PROGRAMS > $OUT/r/suite.txt 2>&1; echo "suite rc=$? ${SECONDS}s"
grep -h '^RESULT' /tmp/suite_$RUN/*.log > $OUT/r/results.txt; cut -c1-600 $OUT/r/results.txt
for f in /tmp/suite_$RUN/*.log; do grep -q '"error"' $f && tail -25 $f > $OUT/r/$(basename $f).tail; done
cd $OUT && tar czf r.tgz r && rm -rf r
true
