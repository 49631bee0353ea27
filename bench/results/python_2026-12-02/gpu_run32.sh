#!/usr/bin/env bash
# GPU run 32: the final check: C++ GPU suite, Python tests, memcheck of both.
set -x
export NCCL_NVLS_ENABLE=0 HOSTJIT_SOURCE_DIR=$PWD XLA_PYTHON_CLIENT_PREALLOCATE=false
mkdir -p /tmp/b $OUT/r && tar xJf carry/gpu32.tar.xz -C /tmp/b
export PYTHONPATH=/tmp/b/python312:$PWD/test/python HOSTJIT_BUILD_DIR=/tmp/b HOSTJIT_CACHE_DIR=/tmp/hjcache
date -u > $OUT/r/commit.txt; nvidia-smi -L >> $OUT/r/commit.txt
timeout 150 python3 -m pytest -q -ra -p no:cacheprovider test/python > $OUT/r/pytest.log 2>&1; echo "rc=$?" >> $OUT/r/pytest.log
tail -4 $OUT/r/pytest.log
timeout 100 compute-sanitizer --tool memcheck --leak-check no --error-exitcode 3 python3 -m pytest -q -p no:cacheprovider test/python/test_gpu.py -k "not no_growth and not jax" > $OUT/r/memcheck_py.log 2>&1; echo "rc=$?" >> $OUT/r/memcheck_py.log
tail -3 $OUT/r/memcheck_py.log
timeout 150 /tmp/b/bin/hostjit_gpu_tests '~[fault]' > $OUT/r/gpu_tests.log 2>&1; echo "rc=$?" >> $OUT/r/gpu_tests.log
tail -3 $OUT/r/gpu_tests.log
timeout 170 compute-sanitizer --tool memcheck --leak-check full --error-exitcode 3 /tmp/b/bin/hostjit_gpu_tests '[profile],[graph]' > $OUT/r/memcheck_cpp.log 2>&1; echo "rc=$?" >> $OUT/r/memcheck_cpp.log
tail -4 $OUT/r/memcheck_cpp.log
cd $OUT && tar czf results.tgz r && rm -rf r
