#!/usr/bin/env bash
# GPU run 12 at d7ced77, the stop's final C++ and Python: the GPU suite,
# fault cases, memcheck over [graph],[matmul] (views of parameters now
# checked per call), test_gpu.py and test_dynamo.py; then the decode
# benchmark with each run's caches cold: the KV loop at batch 8 (hostjit,
# whose prompt graph run 11 refused, and torch.compile: bits and time to
# the first token, both cold) and the growing loop at batch 1
# (torch.compile, beside run 11's hostjit).
export NCCL_NVLS_ENABLE=0 HOSTJIT_SOURCE_DIR=$PWD HOSTJIT_CACHE_DIR=/tmp/hjcache TORCHINDUCTOR_CACHE_DIR=/tmp/ic12 TRITON_CACHE_DIR=/tmp/tc12
B=/tmp/b12
D=/tmp/d12
rm -rf $B $D && mkdir -p $B/py/hostjit $OUT/r && tar xJf carry/d12.tar.xz -C $B && cp $B/hostjit_py/*.so $B/py/hostjit/
cp python/hostjit/*.py $B/py/hostjit/
{ date -u; nvidia-smi -L; echo d7ced77; } > $OUT/r/info.txt 2>&1
t=$B/hostjit_gpu_tests
SECONDS=0
timeout 150 $t '~[fault]' > $OUT/r/gpu_tests.log 2>&1; echo "gpu tests rc=$? ${SECONDS}s: $(tail -2 $OUT/r/gpu_tests.log | tr '\n' ' ')"
grep -B2 -A12 "FAILED" $OUT/r/gpu_tests.log | head -40
for c in 0 1 2 3 4 5; do HOSTJIT_FAULT_CASE=$c timeout 60 $t '[fault]' > $OUT/r/fault_$c.log 2>&1; echo "case $c rc=$? $(tail -2 $OUT/r/fault_$c.log | tr '\n' ' ')"; done
timeout 120 compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 3 $t '[graph],[matmul]' > $OUT/r/memcheck.log 2>&1; echo "memcheck rc=$?"
grep -E "ERROR SUMMARY|All tests|test cases" $OUT/r/memcheck.log | head -3
export PYTHONPATH=$B/py
SECONDS=0
timeout 150 python3 -m pytest -q -rs test/python/test_gpu.py test/python/test_dynamo.py > $OUT/r/pytest.log 2>&1; echo "pytest rc=$? ${SECONDS}s"
grep -E "passed|failed|^E " $OUT/r/pytest.log | head -20 | cut -c1-300
T0=$SECONDS
timeout 200 python3 bench/decode_gpt2.py all $D --steps 512 --batches 8 --loops kv --modes hostjit,inductor --timeout 100 > $OUT/r/decode.txt 2>&1
timeout 75 python3 bench/decode_gpt2.py all $D --steps 512 --batches 1 --loops grow --modes inductor --timeout 70 >> $OUT/r/decode.txt 2>&1; echo "decode $((SECONDS-T0))s"
cut -c1-300 $OUT/r/decode.txt
python3 bench/decode_gpt2.py table $D > $OUT/r/table.md 2>&1; cat $OUT/r/table.md
cp $D/*.json $D/*.log $OUT/r/ 2>/dev/null
cd $OUT && tar czf r.tgz r && rm -rf r
true
