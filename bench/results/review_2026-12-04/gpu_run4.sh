#!/usr/bin/env bash
# The graph benchmark of 1e7d64b again, pinned to one core, three
# repetitions of the many-inputs replays by Executable::run (without and
# with a binding) and by the raw entry.
export NCCL_NVLS_ENABLE=0 HOSTJIT_SOURCE_DIR=$PWD
B=/tmp/b3
mkdir -p $B && tar xJf carry/r3.tar.xz -C $B
export LD_LIBRARY_PATH=$B
timeout 400 taskset -c 3 $B/hostjit_graph_bench --benchmark_filter='BM_ManyInputs' --benchmark_repetitions=3 \
  --benchmark_out=$OUT/many_inputs_pinned.json > $OUT/many_inputs_pinned.txt 2>&1; echo "rc=$?"
grep -h "^BM_" $OUT/many_inputs_pinned.txt | grep -v "_mean\|_stddev\|_cv" | sed -E 's/[a-z_]+_(cycles|instr)=[-0-9.k]+ //g; s/launches=[0-9.kM]+//; s/graph_(builds|grid_updates|updates)=[0-9]+ //g'
