#!/usr/bin/env bash
# One call's peak device bytes of each program recorded in gpu_run1, 2 and 4
# (carry/descs.tar.xz: the descriptions and kernels), at 0c3f427.
export NCCL_NVLS_ENABLE=0
B=/tmp/b
mkdir -p $B && tar xJf carry/s9.tar.xz -C $B && tar xJf carry/descs.tar.xz -C /tmp
args=""
for d in /tmp/descs/*/; do
  n=$(basename $d); a=$d$n.inductor.json
  case $n in dynamic_ln_gelu|dynamic_mlp) a="$a=24";; dynamic_attention) a="$a=64";; esac
  args="$args $a"
done
timeout 200 python3 scripts/gpu/inductor_peak.py $B/hostjit $args > $OUT/peaks.txt 2>&1; echo "rc=$?"
cat $OUT/peaks.txt
