#!/usr/bin/env bash
# The recorder as the package's hostjit.inductor (d65bc6d; C++ as 0c3f427):
# two programs through the suite, end to end, with one call's peak.
export NCCL_NVLS_ENABLE=0
B=/tmp/b
mkdir -p $B/py/hostjit && tar xJf carry/s9.tar.xz -C $B && cp $B/hostjit_py/*.so $B/py/hostjit/
cp python/hostjit/__init__.py python/hostjit/inductor.py $B/py/hostjit/
export PYTHONPATH=$B/py
timeout 150 python3 scripts/gpu/inductor_suite.py $B/hostjit /tmp/suite --jobs 2 mlp sgd > $OUT/suite.txt 2>&1; echo "suite rc=$?"
grep RESULT $OUT/suite.txt | tail -2
for f in /tmp/suite/*.log; do grep -q '"error"' $f && tail -25 $f > $OUT/$(basename $f).tail; done
true
