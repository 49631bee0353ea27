#!/usr/bin/env bash
# GPU run 10 at 398c2a7: run 9 again with wall-clock samples of the main thread (WALL=1, 4 kHz): blocking waits in the program count. As run 9:
# sampler/sampler.c samples the KV-cache decode at batch 1 in process:
# 4 rounds of 800 steps after a round of warm-up, hostjit's backend, then
# torch.compile's default for the share of Dynamo and the model's Python.
# The samples are resolved here against the same module (resolve.py).
export NCCL_NVLS_ENABLE=0 HOSTJIT_CACHE_DIR=/tmp/hjcache TORCHINDUCTOR_CACHE_DIR=/tmp/ic10 TRITON_CACHE_DIR=/tmp/tc10
B=/tmp/b10
rm -rf $B && mkdir -p $B/py/hostjit $OUT/r && tar xJf carry/d8.tar.xz -C $B && cp $B/hostjit_py/*.so $B/py/hostjit/
cp python/hostjit/*.py $B/py/hostjit/
export PYTHONPATH=$B/py HOSTJIT_SOURCE_DIR=$PWD
for m in hostjit; do
  SECONDS=0
  WALL=1 HZ=4000 ROUNDS=2 timeout 200 python3 bench/results/dynamo_2026-12-04/sampler/sample_step.py $m $PWD/carry/libsampler.so $OUT/r/samples_$m.txt > $OUT/r/sample_$m.log 2>&1; echo "$m rc=$? ${SECONDS}s"
  tail -2 $OUT/r/sample_$m.log | cut -c1-300
done
cd $OUT && tar czf r.tgz r && rm -rf r
true
