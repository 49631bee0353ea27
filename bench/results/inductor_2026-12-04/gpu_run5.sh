#!/usr/bin/env bash
# hostjit of 2f1cc9f: two more programs through the recorder, a chunked
# linear (slices at element offsets into matmuls) and transformers' GPT-2
# block (small config, random weights), to see where the recorder stops.
export NCCL_NVLS_ENABLE=0
B=/tmp/b
mkdir -p $B && tar xJf carry/v3.tar.xz -C $B
for p in chunk_mm gpt2_block; do
  timeout 280 python3 scripts/gpu/inductor_suite.py $B/hostjit /tmp/suite $p > $OUT/$p.txt 2>&1; echo "$p rc=$?"
  grep RESULT $OUT/$p.txt; grep -A3 "Unsupported\|Error" $OUT/$p.txt | tail -6
done
cd /tmp/suite && rm -rf */inductor_cache */triton_cache && find . -name "*.so" -delete
tar cJf $OUT/more.tar.xz . && ls -la $OUT/more.tar.xz
