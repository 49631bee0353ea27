#!/usr/bin/env bash
# GPU run 11 at the commit after 9c583c2 (the program makes torch's
# tensors itself: tensor_type; the first call's time split; a training
# test): test_gpu.py and test_dynamo.py, then the decode benchmark over 512
# lengths: the KV loop at batch 1 (hostjit, torch.compile, reduce-overhead)
# and batch 8 (hostjit), and the growing loop at batch 1 (hostjit).
export NCCL_NVLS_ENABLE=0 HOSTJIT_CACHE_DIR=/tmp/hjcache TORCHINDUCTOR_CACHE_DIR=/tmp/ic11 TRITON_CACHE_DIR=/tmp/tc11
B=/tmp/b11
D=/tmp/d11
rm -rf $B $D && mkdir -p $B/py/hostjit $OUT/r && tar xJf carry/d11.tar.xz -C $B && cp $B/hostjit_py/*.so $B/py/hostjit/
cp python/hostjit/*.py $B/py/hostjit/
export PYTHONPATH=$B/py HOSTJIT_SOURCE_DIR=$PWD
{ date -u; nvidia-smi -L; git log -1 --format=%h 2>/dev/null; } > $OUT/r/info.txt 2>&1
SECONDS=0
timeout 150 python3 -m pytest -q -rs test/python/test_gpu.py test/python/test_dynamo.py > $OUT/r/pytest.log 2>&1; echo "pytest rc=$? ${SECONDS}s"
grep -E "passed|failed|Error|^E " $OUT/r/pytest.log | head -30 | cut -c1-300
T0=$SECONDS
timeout 240 python3 bench/decode_gpt2.py all $D --steps 512 --batches 1 --loops kv --modes hostjit,inductor,reduce_overhead --timeout 100 > $OUT/r/decode.txt 2>&1
timeout 110 python3 bench/decode_gpt2.py all $D --steps 512 --batches 8 --loops kv --modes hostjit --timeout 100 >> $OUT/r/decode.txt 2>&1
timeout 110 python3 bench/decode_gpt2.py all $D --steps 512 --batches 1 --loops grow --modes hostjit --timeout 100 >> $OUT/r/decode.txt 2>&1; echo "decode $((SECONDS-T0))s"
cut -c1-300 $OUT/r/decode.txt
python3 bench/decode_gpt2.py table $D > $OUT/r/table.md 2>&1; cat $OUT/r/table.md
cp $D/*.json $D/*.log $OUT/r/ 2>/dev/null
cd $OUT && tar czf r.tgz r && rm -rf r
true
