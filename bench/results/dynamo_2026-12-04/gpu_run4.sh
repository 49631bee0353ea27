#!/usr/bin/env bash
# GPU run 4: is a matmul's child graph node, set in place with a capture of
# other sizes, the cause of run 3's logits differing from Inductor's? The
# new GPU test (attention and projection products over 36 lengths, graph
# mode's bits against eager's) with the child node's kernels compared
# before an update (hostjit_gpu_tests) and without (..._nocheck, e38a3b8's
# graph); then [graph],[matmul]; the decode's growing loop at batch 1 over
# 512 lengths with the check (compared with run 3's inductor run), and the
# KV-cache loop at batch 1: hostjit and torch.compile.
export NCCL_NVLS_ENABLE=0 HOSTJIT_CACHE_DIR=/tmp/hjcache TORCHINDUCTOR_CACHE_DIR=/tmp/ic4 TRITON_CACHE_DIR=/tmp/tc4
B=/tmp/b4
D=/tmp/d4
rm -rf $B $D && mkdir -p $B/py/hostjit $OUT/r && tar xJf carry/d4.tar.xz -C $B && cp $B/hostjit_py/*.so $B/py/hostjit/
cp python/hostjit/*.py $B/py/hostjit/
export PYTHONPATH=$B/py HOSTJIT_SOURCE_DIR=$PWD
{ date -u; nvidia-smi -L; } > $OUT/r/info.txt 2>&1
T='matmul on the GPU: graph mode over sizes that change every call*'
for v in nocheck check; do
  bin=$B/hostjit_gpu_tests; [ $v = nocheck ] && bin=$B/hostjit_gpu_tests_nocheck
  timeout 60 $bin "$T" > $OUT/r/sizes_$v.log 2>&1; echo "$v rc=$? $(grep -E 'graph builds|test cases' $OUT/r/sizes_$v.log | tr '\n' ' ')"
  grep -m3 -A3 "FAILED" $OUT/r/sizes_$v.log | head -12
done
T0=$SECONDS
timeout 100 $B/hostjit_gpu_tests '[graph],[matmul]' > $OUT/r/gpu_tests.log 2>&1; echo "gpu tests [graph],[matmul] rc=$? $((SECONDS-T0))s: $(tail -2 $OUT/r/gpu_tests.log | tr '\n' ' ')"
T0=$SECONDS
timeout 300 python3 bench/decode_gpt2.py all $D --steps 512 --batches 1 --loops grow --modes hostjit --timeout 120 > $OUT/r/decode.txt 2>&1
timeout 250 python3 bench/decode_gpt2.py all $D --steps 512 --batches 1 --loops kv --modes hostjit,inductor --timeout 120 >> $OUT/r/decode.txt 2>&1; echo "decode rc=$? $((SECONDS-T0))s"
cut -c1-300 $OUT/r/decode.txt
python3 bench/decode_gpt2.py table $D > $OUT/r/table.md 2>&1; cat $OUT/r/table.md
cp $D/*.json $D/*.log $OUT/r/ 2>/dev/null
for f in $D/*.log; do echo "== $f"; grep -v "^$" $f | grep -v -i "warn\|softmax\|important use\|split the" | tail -4 | cut -c1-300; done
cd $OUT && tar czf r.tgz r && rm -rf r
true
