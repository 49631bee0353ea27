#!/usr/bin/env bash
# Binaries of 49dbaa3: fast replays with many unmoved inputs and the
# model-sized program, to check the replay path kept its cost.
export NCCL_NVLS_ENABLE=0 HOSTJIT_SOURCE_DIR=$PWD
B=/tmp/b
mkdir -p $B && tar xJf carry/b6.tar.xz -C $B
export LD_LIBRARY_PATH=$B
timeout 200 $B/hostjit_graph_bench --benchmark_filter='BM_ManyInputs/M:(1|150|300)/|BM_InterleavedModel|BM_ShapeCycle/K:16/D:1/' --benchmark_out=$OUT/replay.json > $OUT/replay.txt 2>&1; echo "rc=$?"
grep -h "^BM_" $OUT/replay.txt | sed -E 's/(jit|graph|graph_static|eval)_(cycles|instr)=[-0-9.k]+ //g'
