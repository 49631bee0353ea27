#!/usr/bin/env bash
# The Inductor suite again, with host microseconds per call: five programs recorded, imported and
# run by hostjit on CUDA (eval and JIT) against Inductor's outputs.
export NCCL_NVLS_ENABLE=0
B=/tmp/b
mkdir -p $B && tar xJf carry/v2.tar.xz -C $B
timeout 500 python3 scripts/gpu/inductor_suite.py $B/hostjit /tmp/suite > $OUT/suite.txt 2>&1; echo "suite rc=$?"
grep RESULT $OUT/suite.txt
grep -B2 -A12 Traceback $OUT/suite.txt | head -60
cd /tmp/suite && find . -name "*.cubin" -size +400k -delete && find . -name "*.so" -delete && rm -rf */inductor_cache */triton_cache
true
