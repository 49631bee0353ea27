#!/usr/bin/env bash
# GPU run 30: the Python module's tests and benchmark, the C++ GPU suite.
set -x
export NCCL_NVLS_ENABLE=0 HOSTJIT_SOURCE_DIR=$PWD
mkdir -p /tmp/b $OUT/r && tar xJf carry/gpu30.tar.xz -C /tmp/b
export PYTHONPATH=/tmp/b/python312:$PWD/test/python HOSTJIT_BUILD_DIR=/tmp/b HOSTJIT_CACHE_DIR=/tmp/hjcache
git log --oneline -1 > $OUT/r/commit.txt 2>&1; date -u >> $OUT/r/commit.txt; nvidia-smi -L >> $OUT/r/commit.txt
timeout 150 python3 -m pytest -q -ra -p no:cacheprovider test/python > $OUT/r/pytest.log 2>&1; echo "rc=$?" >> $OUT/r/pytest.log
tail -15 $OUT/r/pytest.log
for i in 1 2; do
timeout 120 python3 bench/python_overhead.py --out $OUT/r/overhead$i.json --calls 2000 --rounds 15 > $OUT/r/overhead$i.txt 2>&1; echo "rc=$?" >> $OUT/r/overhead$i.txt
cat $OUT/r/overhead$i.txt
done
timeout 100 compute-sanitizer --tool memcheck --leak-check no --error-exitcode 3 python3 -m pytest -q -p no:cacheprovider test/python/test_gpu.py -k "not no_growth and not gil" > $OUT/r/memcheck.log 2>&1; echo "rc=$?" >> $OUT/r/memcheck.log
tail -6 $OUT/r/memcheck.log
cd $OUT && tar czf results.tgz r && rm -rf r
