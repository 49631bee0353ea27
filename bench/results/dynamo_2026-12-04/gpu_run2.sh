#!/usr/bin/env bash
# GPU run 2: matmul sizes out of the shape of work (graph mode binds a
# new length to the graph it has), the static launcher left on:
# test/python/test_dynamo.py, then a 64-step decode at batch 1, both loops,
# hostjit's backend with graph mode on and off.
export NCCL_NVLS_ENABLE=0 HOSTJIT_CACHE_DIR=/tmp/hjcache TORCHINDUCTOR_CACHE_DIR=/tmp/ic2 TRITON_CACHE_DIR=/tmp/tc2
B=/tmp/b2
rm -rf $B && mkdir -p $B/py/hostjit $OUT/r && tar xJf carry/d2.tar.xz -C $B && cp $B/hostjit_py/*.so $B/py/hostjit/
cp python/hostjit/*.py $B/py/hostjit/
export PYTHONPATH=$B/py
{ date -u; nvidia-smi -L; git log -1 --format=%h 2>/dev/null; python3 -c "import torch, triton, transformers; print(torch.__version__, triton.__version__, transformers.__version__)"; } > $OUT/r/info.txt 2>&1
cat $OUT/r/info.txt
T0=$SECONDS
timeout 240 python3 -m pytest -q -rs test/python/test_dynamo.py > $OUT/r/test_dynamo.log 2>&1; echo "test_dynamo rc=$? $((SECONDS-T0))s"
grep -v DEBUG $OUT/r/test_dynamo.log | grep -E 'Error|error|assert|passed|failed|^E ' | head -40 | cut -c1-300
T0=$SECONDS
timeout 400 python3 bench/decode_gpt2.py all /tmp/d2 --steps 64 --batches 1 --loops grow,kv --modes hostjit,hostjit_eager --timeout 110 > $OUT/r/decode.txt 2>&1; echo "decode rc=$? $((SECONDS-T0))s"
cat $OUT/r/decode.txt | cut -c1-400
python3 bench/decode_gpt2.py table /tmp/d2 > $OUT/r/table.md 2>&1; cat $OUT/r/table.md
cp /tmp/d2/*.json /tmp/d2/*.log $OUT/r/ 2>/dev/null
for f in /tmp/d2/*.log; do echo "== $f"; grep -v "^$" $f | grep -v -i "warn\|softmax\|important use\|split the" | tail -6 | cut -c1-400; done
python3 -c '
import json,glob
for f in sorted(glob.glob("/tmp/d2/*.json")):
    r=json.load(open(f)); print(f.split("/")[-1], {k:r.get(k) for k in ("graph_builds","graph_reuses","graph_replans","graph_fallbacks","graph_fast","graph_updates","library_replays")}, "host", [round(x) for x in r["host_us"][2:8]], [round(x) for x in r["host_us"][-4:]], "mem", r["memory"][1], r["memory"][-1])
' 
cd $OUT && tar czf r.tgz r && rm -rf r
true
