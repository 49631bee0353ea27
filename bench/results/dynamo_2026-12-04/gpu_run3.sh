#!/usr/bin/env bash
# GPU run 3 at e38a3b8: the C++ GPU tests of graph mode and matmuls (a
# matmul's sizes left out of the shape of work; the pool's quarter-octave
# sizes and release of smaller cached blocks), test/python/test_dynamo.py,
# then the decode benchmark's growing-length loop at batch 1 over 512
# lengths: hostjit's backend, torch.compile, reduce-overhead (dynamic and
# not) and eager.
export NCCL_NVLS_ENABLE=0 HOSTJIT_CACHE_DIR=/tmp/hjcache TORCHINDUCTOR_CACHE_DIR=/tmp/ic3 TRITON_CACHE_DIR=/tmp/tc3
B=/tmp/b3
D=/tmp/d3
rm -rf $B $D && mkdir -p $B/py/hostjit $OUT/r && tar xJf carry/d3.tar.xz -C $B && cp $B/hostjit_py/*.so $B/py/hostjit/
cp python/hostjit/*.py $B/py/hostjit/
export PYTHONPATH=$B/py HOSTJIT_SOURCE_DIR=$PWD
{ date -u; nvidia-smi -L; echo e38a3b8; python3 -c "import torch, triton, transformers; print(torch.__version__, triton.__version__, transformers.__version__)"; } > $OUT/r/info.txt 2>&1
cat $OUT/r/info.txt
T0=$SECONDS
timeout 100 $B/hostjit_gpu_tests '[graph],[matmul]' > $OUT/r/gpu_tests.log 2>&1; echo "gpu tests [graph],[matmul] rc=$? $((SECONDS-T0))s: $(tail -3 $OUT/r/gpu_tests.log | tr '\n' ' ')"
grep -B5 -A20 "FAILED" $OUT/r/gpu_tests.log | head -60
T0=$SECONDS
timeout 100 python3 -m pytest -q -rs test/python/test_dynamo.py > $OUT/r/test_dynamo.log 2>&1; echo "test_dynamo rc=$? $((SECONDS-T0))s"
grep -v DEBUG $OUT/r/test_dynamo.log | grep -E "Error|error|assert|passed|failed|^E " | head -30 | cut -c1-300
T0=$SECONDS
LEFT=$((575 - SECONDS)); echo "decode gets ${LEFT}s"
timeout $LEFT python3 bench/decode_gpt2.py all $D --steps 512 --batches 1 --loops grow --modes hostjit,inductor,reduce_overhead,reduce_overhead_dynamic,eager --timeout 140 > $OUT/r/decode.txt 2>&1; echo "decode rc=$? $((SECONDS-T0))s"
cut -c1-300 $OUT/r/decode.txt
python3 bench/decode_gpt2.py table $D > $OUT/r/table.md 2>&1; cat $OUT/r/table.md
cp $D/*.json $D/*.log $D/*.pt $OUT/r/ 2>/dev/null
for f in $D/*.log; do echo "== $f"; grep -v "^$" $f | grep -v -i "warn\|softmax\|important use\|split the" | tail -4 | cut -c1-300; done
cd $OUT && tar czf r.tgz r && rm -rf r
true
