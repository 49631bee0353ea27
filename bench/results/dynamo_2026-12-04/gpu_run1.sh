#!/usr/bin/env bash
# GPU run 1: the torch.compile backend's first contact with PyTorch 2.11 -
# test/python/test_dynamo.py, then a short decode (48 steps, batch 1, both
# loops) of hostjit's backend against torch.compile's default.
export NCCL_NVLS_ENABLE=0 HOSTJIT_CACHE_DIR=/tmp/hjcache TORCHINDUCTOR_CACHE_DIR=/tmp/ic1 TRITON_CACHE_DIR=/tmp/tc1
B=/tmp/b1
rm -rf $B && mkdir -p $B/py/hostjit $OUT/r && tar xJf carry/d1.tar.xz -C $B && cp $B/hostjit_py/*.so $B/py/hostjit/
cp python/hostjit/*.py $B/py/hostjit/
export PYTHONPATH=$B/py
{ date -u; nvidia-smi -L; git log -1 --format=%h 2>/dev/null; python3 -c "import torch, triton, transformers; print(torch.__version__, triton.__version__, transformers.__version__)"; } > $OUT/r/info.txt 2>&1
cat $OUT/r/info.txt
T0=$SECONDS
timeout 240 python3 -m pytest -x -q -rs test/python/test_dynamo.py > $OUT/r/test_dynamo.log 2>&1; echo "test_dynamo rc=$? $((SECONDS-T0))s"
tail -40 $OUT/r/test_dynamo.log | cut -c1-300
T0=$SECONDS
timeout 280 python3 bench/decode_gpt2.py all /tmp/d1 --steps 48 --batches 1 --loops grow,kv --modes hostjit,inductor --timeout 130 > $OUT/r/decode.txt 2>&1; echo "decode rc=$? $((SECONDS-T0))s"
cat $OUT/r/decode.txt | cut -c1-400
python3 bench/decode_gpt2.py table /tmp/d1 > $OUT/r/table.md 2>&1; cat $OUT/r/table.md
cp /tmp/d1/*.json /tmp/d1/*.log $OUT/r/ 2>/dev/null
for f in /tmp/d1/*.log; do echo "== $f"; grep -v "^$" $f | tail -8 | cut -c1-400; done
cd $OUT && tar czf r.tgz r && rm -rf r
true
