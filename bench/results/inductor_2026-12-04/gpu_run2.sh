#!/usr/bin/env bash
# What Inductor makes of five small programs, again, with each launcher's
# cache_hash, inductor_meta, triton_meta and grid expression; the whole
# dump packed (run 1 came back only in part).
export NCCL_NVLS_ENABLE=0
timeout 280 python3 bench/results/inductor_2026-12-04/dump.py /tmp/dump > $OUT/dump.txt 2>&1; echo "dump rc=$?"
tail -8 $OUT/dump.txt
cd /tmp/dump && find . -name "*.so" -delete && find . -name "*.cubin" -delete && find . -path "*inductor*" -name "*.py" -size +400k -delete
tar cJf $OUT/dump.tar.xz . && ls -la $OUT/dump.tar.xz
