#!/usr/bin/env bash
# Binaries of 8643cc5, the review's fixes (issue 44), on the H200: the GPU
# suite and the fault cases, the many-inputs replays by the raw entry and
# by Executable::run, keyword calls from Python, and the Python GPU tests.
export NCCL_NVLS_ENABLE=0 HOSTJIT_SOURCE_DIR=$PWD
B=/tmp/b
mkdir -p $B && tar xJf carry/r1.tar.xz -C $B
export LD_LIBRARY_PATH=$B
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/device.txt
timeout 240 $B/hostjit_gpu_tests '~[fault]' > $OUT/suite.txt 2>&1; echo "suite rc=$?"
grep -E "All tests|test cases|assertions|FAILED" $OUT/suite.txt | head -20
for c in 0 1 2 3 4 5; do HOSTJIT_FAULT_CASE=$c timeout 60 $B/hostjit_gpu_tests '[fault]' > $OUT/fault$c.txt 2>&1; echo "fault $c rc=$?"; done
timeout 150 $B/hostjit_graph_bench --benchmark_filter='BM_ManyInputs' --benchmark_out=$OUT/many_inputs.json > $OUT/many_inputs.txt 2>&1; echo "bench rc=$?"
grep -h "^BM_" $OUT/many_inputs.txt | sed -E 's/(jit|graph|graph_static|eval)_(cycles|instr)=[-0-9.k]+ //g'
export PYTHONPATH=$B/py
timeout 100 python3 bench/python_keywords.py --inputs 148 --out $OUT/keywords.json > $OUT/keywords.txt 2>&1; echo "keywords rc=$?"
cat $OUT/keywords.txt | tail -12
timeout 120 python3 -m pytest -q -rs -p no:cacheprovider test/python/test_gpu.py > $OUT/pytest.txt 2>&1; echo "pytest rc=$?"
tail -5 $OUT/pytest.txt
