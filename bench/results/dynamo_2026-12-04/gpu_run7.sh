#!/usr/bin/env bash
# GPU run 7 at 398c2a7: test/python/test_dynamo.py (the page's complete
# example among them, never run before), then where a KV-cache decode
# step's host time goes, hostjit's backend against torch.compile's default
# (profile_step.py: plain timing, cProfile, torch.profiler).
export NCCL_NVLS_ENABLE=0 HOSTJIT_CACHE_DIR=/tmp/hjcache TORCHINDUCTOR_CACHE_DIR=/tmp/ic7 TRITON_CACHE_DIR=/tmp/tc7
B=/tmp/b7
rm -rf $B && mkdir -p $B/py/hostjit $OUT/r && tar xJf carry/d6.tar.xz -C $B && cp $B/hostjit_py/*.so $B/py/hostjit/
cp python/hostjit/*.py $B/py/hostjit/
export PYTHONPATH=$B/py HOSTJIT_SOURCE_DIR=$PWD
{ date -u; nvidia-smi -L; echo 398c2a7; python3 -c "import torch, triton, transformers; print(torch.__version__, triton.__version__, transformers.__version__)"; } > $OUT/r/info.txt 2>&1
SECONDS=0
timeout 270 python3 -m pytest -q -rs test/python/test_dynamo.py > $OUT/r/test_dynamo.log 2>&1; echo "test_dynamo rc=$? ${SECONDS}s"
tail -40 $OUT/r/test_dynamo.log | cut -c1-400
for m in hostjit inductor; do
  SECONDS=0
  timeout 140 python3 bench/results/dynamo_2026-12-04/profile_step.py $m $OUT/r/prof > $OUT/r/prof_$m.log 2>&1; echo "profile $m rc=$? ${SECONDS}s"
  grep '^{' $OUT/r/prof_$m.log; tail -3 $OUT/r/prof_$m.log | cut -c1-300
done
cd $OUT && tar czf r.tgz r && rm -rf r
true
