#!/usr/bin/env bash
# GPU run 8 at 398c2a7 (+ profile_step.py's perf option): where the 0.7 ms
# a KV-cache decode step spends inside the hostjit program goes - perf's
# flat profile of 1024 plainly timed steps, with the module's symbols
# (not stripped).
export NCCL_NVLS_ENABLE=0 HOSTJIT_CACHE_DIR=/tmp/hjcache TORCHINDUCTOR_CACHE_DIR=/tmp/ic8 TRITON_CACHE_DIR=/tmp/tc8
B=/tmp/b8
rm -rf $B && mkdir -p $B/py/hostjit $OUT/r && tar xJf carry/d8.tar.xz -C $B && cp $B/hostjit_py/*.so $B/py/hostjit/
cp python/hostjit/*.py $B/py/hostjit/
export PYTHONPATH=$B/py HOSTJIT_SOURCE_DIR=$PWD
{ date -u; nvidia-smi -L; which perf py-spy nsys gdb; cat /proc/sys/kernel/perf_event_paranoid; perf --version; } > $OUT/r/info.txt 2>&1
cat $OUT/r/info.txt
SECONDS=0
PERF_OUT=/tmp/perf.data STEPS=1024 PLAIN=1 timeout 200 python3 bench/results/dynamo_2026-12-04/profile_step.py hostjit $OUT/r/prof > $OUT/r/prof.log 2>&1; echo "profile rc=$? ${SECONDS}s"
grep '^{' $OUT/r/prof.log; tail -5 $OUT/r/prof.log | cut -c1-300
perf report -i /tmp/perf.data --no-children --sort dso,symbol --stdio --percent-limit 0.25 2>/dev/null | c++filt | cut -c1-220 > $OUT/r/perf_symbols.txt
perf report -i /tmp/perf.data --no-children --sort dso --stdio 2>/dev/null | head -40 > $OUT/r/perf_dso.txt
head -30 $OUT/r/perf_dso.txt; head -60 $OUT/r/perf_symbols.txt
cd $OUT && tar czf r.tgz r && rm -rf r
true
