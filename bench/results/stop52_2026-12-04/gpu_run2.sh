#!/usr/bin/env bash
# GPU run 2 at 4397f47 (run 1's machine): GPT-2's eager call sampled again,
# the preload given to hostjit alone (run 1 sampled `timeout`), with plain
# runs between the sampled ones; then the whole-sequence loop over the
# issue's lengths (16 to 111, 96 steps, batch 1) in five modes (the
# first attempt found a fresh machine without run 1's binaries, so its
# hostjit modes failed; MODES=hostjit,hostjit_eager ran them again).
export NCCL_NVLS_ENABLE=0 HOSTJIT_SOURCE_DIR=$PWD HOSTJIT_CACHE_DIR=/tmp/hjcache
B=/tmp/b13
D=/tmp/d2
mkdir -p $OUT/r
if [ ! -x $B/hostjit ]; then
  mkdir -p $B/py/hostjit && tar xJf carry/d13.tar.xz -C $B && cp $B/hostjit_py/*.so $B/py/hostjit/ && cp python/hostjit/*.py $B/py/hostjit/
fi
export PYTHONPATH=$B/py
F=test/lit/inputs/inductor/recorded/gpt2_model/gpt2_model.inductor.json
run="$B/hostjit run $F --backend cuda --mode jit --no-tier --repeat 2000"
for k in 1 2; do
  timeout 60 $run 2>&1 | grep median | head -1
  for wall in 0 1; do
    timeout 90 env SAMPLER_OUT=$OUT/r/samples_wall${wall}_$k.txt SAMPLER_WALL=$wall SAMPLER_HZ=4000 LD_PRELOAD=$B/libsampler_preload.so $run 2>&1 | grep median | head -1
  done
done
wc -l $OUT/r/samples*
rm -rf $D; SECONDS=0
timeout 420 python3 bench/decode_gpt2.py all $D --steps 96 --batches 1 --loops grow --modes ${MODES:-hostjit,hostjit_eager,inductor,reduce_overhead,eager} --timeout 110 > $OUT/r/decode.txt 2>&1; echo "decode rc=$? ${SECONDS}s"
cut -c1-300 $OUT/r/decode.txt | tail -20
python3 bench/decode_gpt2.py table $D > $OUT/r/table.md 2>&1; cat $OUT/r/table.md
cp $D/*.json $D/*.log $OUT/r/ 2>/dev/null
cd $OUT && tar czf r.tgz r && rm -rf r
true
