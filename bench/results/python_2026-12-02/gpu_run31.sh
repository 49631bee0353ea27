#!/usr/bin/env bash
# GPU run 31: the Python tests at the final module (JAX included), memcheck.
set -x
export NCCL_NVLS_ENABLE=0 HOSTJIT_SOURCE_DIR=$PWD XLA_PYTHON_CLIENT_PREALLOCATE=false
mkdir -p /tmp/b $OUT/r && tar xJf carry/gpu31.tar.xz -C /tmp/b
export PYTHONPATH=/tmp/b/python312:$PWD/test/python HOSTJIT_BUILD_DIR=/tmp/b HOSTJIT_CACHE_DIR=/tmp/hjcache
date -u > $OUT/r/commit.txt; nvidia-smi -L >> $OUT/r/commit.txt
python3 -c "import jax; print(jax.__version__, jax.devices())" >> $OUT/r/commit.txt 2>&1
timeout 200 python3 -m pytest -v -ra -p no:cacheprovider test/python > $OUT/r/pytest.log 2>&1; echo "rc=$?" >> $OUT/r/pytest.log
grep -E "PASS|FAIL|SKIP|ERROR|rc=" $OUT/r/pytest.log | tail -50
timeout 150 compute-sanitizer --tool memcheck --leak-check no --error-exitcode 3 python3 -m pytest -q -p no:cacheprovider test/python/test_gpu.py -k "not no_growth and not jax" > $OUT/r/memcheck.log 2>&1; echo "rc=$?" >> $OUT/r/memcheck.log
tail -5 $OUT/r/memcheck.log
cat $OUT/r/commit.txt
cd $OUT && tar czf results.tgz r && rm -rf r
