#!/usr/bin/env bash
# GPU run 3 at e7e6d08 (the recapture rule of graph mode's worth policy):
# the GPU suite, fault cases 0-5, memcheck over [graph],[matmul],
# test_gpu.py and test_dynamo.py; GPT-2's eager call against Inductor's
# wrapper in alternating rounds (paired_rounds.py); the whole-sequence loop
# (lengths 16 to 111) with hostjit's backend, and the KV loop (512 lengths,
# batch 1) with graph mode on and off, graphs built per step recorded.
export NCCL_NVLS_ENABLE=0 HOSTJIT_SOURCE_DIR=$PWD HOSTJIT_CACHE_DIR=/tmp/hjcache
B=/tmp/b14
D=/tmp/d3
rm -rf $B $D && mkdir -p $B/py/hostjit $OUT/r && tar xJf carry/d14.tar.xz -C $B && cp $B/hostjit_py/*.so $B/py/hostjit/
cp python/hostjit/*.py $B/py/hostjit/
{ date -u; nvidia-smi -L; echo e7e6d08; } > $OUT/r/info.txt 2>&1
t=$B/hostjit_gpu_tests
SECONDS=0
timeout 150 $t '~[fault]' > $OUT/r/gpu_tests.log 2>&1; echo "gpu tests rc=$? ${SECONDS}s: $(tail -2 $OUT/r/gpu_tests.log | tr '\n' ' ')"
grep -B2 -A12 "FAILED" $OUT/r/gpu_tests.log | head -40
grep -A3 "lengths:" $OUT/r/gpu_tests.log | head -4
for c in 0 1 2 3 4 5; do HOSTJIT_FAULT_CASE=$c timeout 60 $t '[fault]' > $OUT/r/fault_$c.log 2>&1; echo "case $c rc=$? $(tail -2 $OUT/r/fault_$c.log | tr '\n' ' ')"; done
timeout 120 compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 3 $t '[graph],[matmul]' > $OUT/r/memcheck.log 2>&1; echo "memcheck rc=$?"
grep -E "ERROR SUMMARY|All tests|test cases" $OUT/r/memcheck.log | head -3
export PYTHONPATH=$B/py
SECONDS=0
timeout 150 python3 -m pytest -q -rs test/python/test_gpu.py test/python/test_dynamo.py > $OUT/r/pytest.log 2>&1; echo "pytest rc=$? ${SECONDS}s"
grep -E "passed|failed|^E " $OUT/r/pytest.log | head -20 | cut -c1-300
SECONDS=0
timeout 110 python3 bench/results/stop52_2026-12-04/paired_rounds.py $B/hostjit 5 > $OUT/r/paired.txt 2>&1; echo "paired rc=$? ${SECONDS}s"
tail -7 $OUT/r/paired.txt
SECONDS=0
timeout 75 python3 bench/decode_gpt2.py all $D --steps 96 --batches 1 --loops grow --modes hostjit --timeout 70 > $OUT/r/decode.txt 2>&1
timeout 170 python3 bench/decode_gpt2.py all $D --steps 512 --batches 1 --loops kv --modes hostjit,hostjit_eager --timeout 84 >> $OUT/r/decode.txt 2>&1; echo "decode ${SECONDS}s"
cut -c1-300 $OUT/r/decode.txt | tail -12
python3 bench/decode_gpt2.py table $D > $OUT/r/table.md 2>&1; cat $OUT/r/table.md
grep -h "does not pay" $D/*.log | head -3 | cut -c1-400
cp $D/*.json $D/*.log $OUT/r/ 2>/dev/null
cd $OUT && tar czf r.tgz r && rm -rf r
true
