#!/usr/bin/env bash
# GPU run 6 of stop 56: the GPU tests at bcfbffc (probation's default the
# cache's size) in the device time left: [graph] and [matmul] first, then
# memcheck over [graph], then the rest but the fault cases.
export NCCL_NVLS_ENABLE=0 HOSTJIT_SOURCE_DIR=$PWD HOSTJIT_CACHE_DIR=/tmp/hjcache
B=/tmp/hj-bundle
rm -rf $B && mkdir -p $B $OUT/r && xz -dc carry/bundle.tar.xz | tar xf - -C $B
{ date -u; nvidia-smi -L; cat $B/commit; } > $OUT/r/info.txt 2>&1; cat $OUT/r/info.txt
t=$B/hostjit_gpu_tests
SECONDS=0
timeout 60 $t '[graph],[matmul]' > $OUT/r/graph_matmul.log 2>&1; echo "[graph],[matmul] rc=$? ${SECONDS}s: $(tail -2 $OUT/r/graph_matmul.log | tr '\n' ' ')"
timeout 40 compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 3 $t '[graph]' > $OUT/r/memcheck.log 2>&1
echo "memcheck [graph] rc=$? ${SECONDS}s: $(grep -E 'ERROR SUMMARY|All tests|test cases' $OUT/r/memcheck.log | tr '\n' ' ')"
timeout 80 $t '~[fault]~[graph]~[matmul]' > $OUT/r/rest.log 2>&1; echo "the rest rc=$? ${SECONDS}s: $(tail -2 $OUT/r/rest.log | tr '\n' ' ')"
cd $OUT && tar czf r.tgz r && rm -rf r
