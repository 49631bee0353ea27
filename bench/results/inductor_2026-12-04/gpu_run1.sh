#!/usr/bin/env bash
# bbe71f3 on the H200: the GPU suite (views at offsets moved graph mode's
# fake addresses and patches; kernels declare their block), then what
# Inductor makes of five small programs (wrappers, cache entries, the
# launchers that ran): material for the Inductor recorder.
export NCCL_NVLS_ENABLE=0 HOSTJIT_SOURCE_DIR=$PWD
B=/tmp/b
mkdir -p $B && tar xJf carry/v1.tar.xz -C $B
export LD_LIBRARY_PATH=$B
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/device.txt
timeout 240 $B/hostjit_gpu_tests '~[fault]' > $OUT/suite.txt 2>&1; echo "suite rc=$?"
grep -E "All tests|test cases|assertions|FAILED" $OUT/suite.txt | head -20
python3 -c "import torch, triton; print(torch.__version__, triton.__version__)"
timeout 280 python3 bench/results/inductor_2026-12-04/dump.py $OUT/dump > $OUT/dump.txt 2>&1; echo "dump rc=$?"
tail -15 $OUT/dump.txt
find $OUT/dump -name "*.so" -delete; find $OUT/dump -name "*.cubin" -size +300k -delete
du -sh $OUT/dump
