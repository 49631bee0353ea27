#!/usr/bin/env bash
# The graph benchmark of 580e6f4: BM_ManyInputsRun (one program a
# benchmark: run() without and with a binding) and the raw-entry
# BM_ManyInputs, three repetitions.
export NCCL_NVLS_ENABLE=0 HOSTJIT_SOURCE_DIR=$PWD
B=/tmp/b5
mkdir -p $B && tar xJf carry/r3.tar.xz -C $B
export LD_LIBRARY_PATH=$B
timeout 400 $B/hostjit_graph_bench --benchmark_filter='BM_ManyInputs' --benchmark_repetitions=3 \
  --benchmark_out=$OUT/many_inputs_580e6f4.json > $OUT/many_inputs_580e6f4.txt 2>&1; echo "rc=$?"
grep -h "_median" $OUT/many_inputs_580e6f4.txt | sed -E 's/[a-z_]+_(cycles|instr)=[-0-9.k]+ //g; s/launches=[0-9.kM]+//; s/graph_(builds|grid_updates|updates)=[0-9]+ //g'
