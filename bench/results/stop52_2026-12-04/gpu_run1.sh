#!/usr/bin/env bash
# GPU run 1 at 4397f47 (stop 51's final commit, owed): the GPU suite, fault
# cases 0-5, memcheck over [graph],[matmul], test_gpu.py and test_dynamo.py;
# then where GPT-2's eager call (the recorded gpt2_model fixture, JIT,
# replays on and off) spends its host time: plain timing, then sampled by
# libsampler_preload.so (sampler.c at process load) in CPU and wall mode.
export NCCL_NVLS_ENABLE=0 HOSTJIT_SOURCE_DIR=$PWD HOSTJIT_CACHE_DIR=/tmp/hjcache
B=/tmp/b13
rm -rf $B && mkdir -p $B/py/hostjit $OUT/r && tar xJf carry/d13.tar.xz -C $B && cp $B/hostjit_py/*.so $B/py/hostjit/
cp python/hostjit/*.py $B/py/hostjit/
{ date -u; nvidia-smi -L; echo 4397f47; } > $OUT/r/info.txt 2>&1
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
F=test/lit/inputs/inductor/recorded/gpt2_model/gpt2_model.inductor.json
run="$B/hostjit run $F --backend cuda --mode jit --no-tier"
for env in "X=1" "HOSTJIT_MATMUL_REPLAYS=0"; do
  echo "== $env"; env $env timeout 60 $run --repeat 1000 --stats json > $OUT/r/gpt2_${env%%=*}.txt 2>&1
  grep -E "median|library_replays|\"launches" $OUT/r/gpt2_${env%%=*}.txt | head -5
done
for wall in 0 1; do
  SAMPLER_OUT=$OUT/r/samples_wall$wall.txt SAMPLER_WALL=$wall SAMPLER_HZ=4000 LD_PRELOAD=$B/libsampler_preload.so timeout 90 $run --repeat 3000 2>&1 | grep median
done
ls -la $OUT/r | tail -3
cd $OUT && tar czf r.tgz r && rm -rf r
true
