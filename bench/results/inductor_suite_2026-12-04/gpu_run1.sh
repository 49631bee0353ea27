#!/usr/bin/env bash
# The 200-shape run of two dynamic programs, then the Inductor suite without
# GPT-2 (its block and model run in gpu_run2.sh), four programs at a time.
export NCCL_NVLS_ENABLE=0
B=/tmp/b
mkdir -p $B/py/hostjit && tar xJf carry/s8.tar.xz -C $B && cp $B/hostjit_py/* $B/py/hostjit/
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/device.txt
git log --oneline -1 >> $OUT/device.txt 2>/dev/null
python3 -c "import torch, triton, transformers; print(torch.__version__, triton.__version__, transformers.__version__)" >> $OUT/device.txt
PYTHONPATH=$B/py timeout 200 python3 scripts/gpu/inductor_shapes.py /tmp/shapes > $OUT/shapes.txt 2>&1; echo "shapes rc=$?"
grep SHAPES $OUT/shapes.txt
progs=$(python3 -c "import sys; sys.path.insert(0,'scripts/gpu'); from inductor_programs_suite import programs; print(' '.join(n for n in programs() if not n.startswith('gpt2')))")
timeout 330 python3 scripts/gpu/inductor_suite.py $B/hostjit /tmp/suite --jobs 4 $progs > $OUT/suite.txt 2>&1; echo "suite rc=$?"
tail -30 $OUT/suite.txt
grep -h RESULT /tmp/suite/*.log > $OUT/results_from_logs.txt 2>/dev/null
cd /tmp && tar czf $OUT/suite.tgz --exclude='*_cache' --exclude='*.npy' --exclude='*.so' suite shapes 2>/dev/null
true
