#!/usr/bin/env bash
# GPU run 5: where graph mode's bits leave eager's when a matmul's sizes
# change (run 4: one length of 36 differed, with or without the child's
# kernels compared): the test again, reporting each output's largest
# difference and the call's way, as it is, with every signature its own
# graph (HOSTJIT_GRAPHS_PER_SHAPE=0: no node set in place) and with host
# updates only; then the decode benchmark's remaining runs: the KV loop at
# batch 1 for reduce-overhead and eager, and batch 8 for hostjit and
# torch.compile, both loops.
export NCCL_NVLS_ENABLE=0 HOSTJIT_CACHE_DIR=/tmp/hjcache TORCHINDUCTOR_CACHE_DIR=/tmp/ic5 TRITON_CACHE_DIR=/tmp/tc5
B=/tmp/b5
D=/tmp/d5
rm -rf $B $D && mkdir -p $B/py/hostjit $OUT/r && tar xJf carry/d5.tar.xz -C $B && cp $B/hostjit_py/*.so $B/py/hostjit/
cp python/hostjit/*.py $B/py/hostjit/
export PYTHONPATH=$B/py HOSTJIT_SOURCE_DIR=$PWD
{ date -u; nvidia-smi -L; } > $OUT/r/info.txt 2>&1
T='matmul on the GPU: graph mode over sizes that change every call*'
for v in default per_shape_0 host_updates; do
  case $v in
    default) e="";; per_shape_0) e="HOSTJIT_GRAPHS_PER_SHAPE=0";; host_updates) e="HOSTJIT_GRAPH_DEVICE_UPDATES=0";;
  esac
  env $e timeout 60 $B/hostjit_gpu_tests "$T" > $OUT/r/sizes_$v.log 2>&1; echo "$v rc=$? $(grep -E 'graph builds|test cases' $OUT/r/sizes_$v.log | tr '\n' ' ')"
  grep -A4 "with messages" $OUT/r/sizes_$v.log | grep -E "length|output" | head -8
done
T0=$SECONDS
timeout 110 python3 bench/decode_gpt2.py all $D --steps 512 --batches 1 --loops kv --modes reduce_overhead,eager --timeout 80 > $OUT/r/decode.txt 2>&1
timeout 270 python3 bench/decode_gpt2.py all $D --steps 512 --batches 8 --loops kv,grow --modes hostjit,inductor --timeout 100 >> $OUT/r/decode.txt 2>&1; echo "decode rc=$? $((SECONDS-T0))s"
cut -c1-300 $OUT/r/decode.txt
python3 bench/decode_gpt2.py table $D > $OUT/r/table.md 2>&1; cat $OUT/r/table.md
cp $D/*.json $D/*.log $OUT/r/ 2>/dev/null
cd $OUT && tar czf r.tgz r && rm -rf r
true
