#!/usr/bin/env bash
# The graph benchmark of 1e7d64b: the many-inputs replays by the raw entry
# and by Executable::run, without and with a binding, twice.
export NCCL_NVLS_ENABLE=0 HOSTJIT_SOURCE_DIR=$PWD
B=/tmp/b3
mkdir -p $B && tar xJf carry/r3.tar.xz -C $B
export LD_LIBRARY_PATH=$B
for r in 1 2; do
  timeout 120 $B/hostjit_graph_bench --benchmark_filter='BM_ManyInputs' --benchmark_out=$OUT/many_inputs_run$r.json > $OUT/many_inputs_run$r.txt 2>&1; echo "run $r rc=$?"
  grep -h "^BM_" $OUT/many_inputs_run$r.txt | sed -E 's/[a-z_]+_(cycles|instr)=[-0-9.k]+ //g'
done
