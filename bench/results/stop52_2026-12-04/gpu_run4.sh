#!/usr/bin/env bash
# GPU run 4 at e7e6d08: the whole-sequence loop (lengths 16 to 111, batch
# 1) with hostjit's backend, graph mode on (the recapture rule) and off, in
# one session of the machine, so that the two compare.
export NCCL_NVLS_ENABLE=0 HOSTJIT_SOURCE_DIR=$PWD HOSTJIT_CACHE_DIR=/tmp/hjcache
B=/tmp/b14
D=/tmp/d4
rm -rf $B $D && mkdir -p $B/py/hostjit $OUT/r && tar xJf carry/d14.tar.xz -C $B && cp $B/hostjit_py/*.so $B/py/hostjit/
cp python/hostjit/*.py $B/py/hostjit/
export PYTHONPATH=$B/py
SECONDS=0
timeout 200 python3 bench/decode_gpt2.py all $D --steps 96 --batches 1 --loops grow --modes hostjit,hostjit_eager --timeout 95 > $OUT/r/decode.txt 2>&1; echo "decode ${SECONDS}s"
cut -c1-300 $OUT/r/decode.txt | tail -6
python3 bench/decode_gpt2.py table $D > $OUT/r/table.md 2>&1; cat $OUT/r/table.md
cp $D/*.json $D/*.log $OUT/r/ 2>/dev/null
true
