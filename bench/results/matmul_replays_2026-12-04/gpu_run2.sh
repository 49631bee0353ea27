#!/usr/bin/env bash
# GPU run 2 at 5fb8443 (a fresh machine: binaries unpacked again, GPT-2's
# model recorded again by the suite, alone): the matmul bench (bare
# cuBLASLt, hj_matmul with and without replays; libbenchmark carried),
# bare cuLaunchKernel against hj_launch, and where GPT-2's eager call
# spends its host time (`hostjit run --profile` on run 1's recording).
export NCCL_NVLS_ENABLE=0 HOSTJIT_SOURCE_DIR=$PWD HOSTJIT_CACHE_DIR=/tmp/hjcache LD_LIBRARY_PATH=$PWD/carry
B=/tmp/b7
mkdir -p $OUT/r
if [ ! -x $B/hostjit ]; then
  mkdir -p $B/py/hostjit && tar xJf carry/m7.tar.xz -C $B && cp $B/hostjit_py/*.so $B/py/hostjit/
  cp python/hostjit/*.py $B/py/hostjit/
fi
export PYTHONPATH=$B/py
timeout 120 $B/hostjit_matmul_bench --benchmark_min_time=0.2 --benchmark_repetitions=3 --benchmark_report_aggregates_only=true > $OUT/r/matmul_bench.txt 2>&1; echo "matmul bench rc=$?"
grep median $OUT/r/matmul_bench.txt | cut -c1-170
timeout 200 python3 scripts/gpu/inductor_suite.py $B/hostjit /tmp/suite7 --jobs 1 gpt2_model > $OUT/r/suite.txt 2>&1; echo "suite rc=$?"
grep -h '^RESULT' /tmp/suite7/*.log | cut -c1-520
D=/tmp/suite7/gpt2_model
if [ -f $D/gpt2_model.inductor.json ]; then
  ARGS=$(python3 - <<'PY'
import json
d = json.load(open("/tmp/suite7/gpt2_model/gpt2_model.inductor.json"))
out = []
for i in d["inputs"]:
    out += ["--input", "%s=@/tmp/suite7/gpt2_model/%s.npy" % (i["name"], i["name"])]
print(" ".join(out))
PY
)
  for env in "" "HOSTJIT_MATMUL_REPLAYS=0"; do
    echo "== $env"
    env $env timeout 120 $B/hostjit run $D/gpt2_model.inductor.json --backend cuda --mode jit --no-tier --repeat 300 $ARGS 2>&1 | grep -E "median" | head -3
    env $env timeout 120 $B/hostjit run $D/gpt2_model.inductor.json --backend cuda --mode jit --no-tier --repeat 50 --profile $ARGS > $OUT/r/profile${env:+_direct}.txt 2>&1
    head -40 $OUT/r/profile${env:+_direct}.txt
  done
else
  echo "no recording left in $D"
fi
cd $OUT && tar czf r.tgz r && rm -rf r
true
