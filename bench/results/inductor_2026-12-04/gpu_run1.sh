#!/usr/bin/env bash
# What Inductor makes of five small programs (wrappers, cache entries, the
# launchers that ran): material for the Inductor recorder.
export NCCL_NVLS_ENABLE=0
python3 -c "import torch, triton; print(torch.__version__, triton.__version__)"
timeout 500 python3 bench/results/inductor_2026-12-04/dump.py $OUT/dump > $OUT/dump.txt 2>&1; echo "dump rc=$?"
tail -30 $OUT/dump.txt
find $OUT/dump -name "*.so" -delete; find $OUT/dump -name "*.cubin" -size +200k -delete
du -sh $OUT/dump
