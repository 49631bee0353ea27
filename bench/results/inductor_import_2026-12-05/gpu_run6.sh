#!/usr/bin/env bash
# GPU run 6 at 4b5f27a (the context's per-stream matmul workspaces): the
# GPU suite, fault cases, the hidden no-library tests, memcheck over
# [graph],[matmul],[triton],[image], the 200-shape run of the dynamic
# GPT-2 block and attention, then the whole Inductor suite (25 programs)
# in the time left; each program's RESULT taken from its own log.
export NCCL_NVLS_ENABLE=0 HOSTJIT_SOURCE_DIR=$PWD HOSTJIT_CACHE_DIR=/tmp/hjcache
B=/tmp/b6
rm -rf $B /tmp/suite6 /tmp/shapes6
mkdir -p $B/py/hostjit $OUT/r && tar xJf carry/m6.tar.xz -C $B && cp $B/hostjit_py/*.so $B/py/hostjit/
cp python/hostjit/__init__.py python/hostjit/inductor.py $B/py/hostjit/
export PYTHONPATH=$B/py
t=$B/hostjit_gpu_tests
{ date -u; nvidia-smi -L; echo 4b5f27a; } > $OUT/r/info.txt
T0=$SECONDS
timeout 150 $t '~[fault]' > $OUT/r/gpu_tests.log 2>&1; echo "rc=$?" >> $OUT/r/gpu_tests.log; echo "gpu tests: $(tail -3 $OUT/r/gpu_tests.log | tr '\n' ' ') $((SECONDS-T0))s"
for c in 0 1 2 3 4 5; do HOSTJIT_FAULT_CASE=$c timeout 40 $t '[fault]' > $OUT/r/fault_$c.log 2>&1; echo "case $c rc=$? $(tail -2 $OUT/r/fault_$c.log | tr '\n' ' ')" >> $OUT/r/faults.txt; done; cat $OUT/r/faults.txt
HOSTJIT_CUBLAS=/nonexistent/libcublas.so timeout 40 $t '[.no_cublas]' > $OUT/r/no_cublas.log 2>&1; echo "no cublas rc=$? $(tail -2 $OUT/r/no_cublas.log | tr '\n' ' ')"
HOSTJIT_CUBLASLT=/nonexistent/libcublasLt.so timeout 40 $t '[.no_cublaslt]' > $OUT/r/no_cublaslt.log 2>&1; echo "no cublaslt rc=$? $(tail -2 $OUT/r/no_cublaslt.log | tr '\n' ' ')"
T0=$SECONDS
timeout 150 compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 3 $t '[graph],[matmul],[triton],[image]' > $OUT/r/memcheck.log 2>&1; echo "memcheck rc=$? $((SECONDS-T0))s"
grep -E "ERROR SUMMARY|All tests|test cases" $OUT/r/memcheck.log | head -3
T0=$SECONDS
timeout 70 python3 scripts/gpu/inductor_shapes.py /tmp/shapes6 dynamic_gpt2_block dynamic_attention > $OUT/r/shapes.txt 2>&1; echo "shapes rc=$? $((SECONDS-T0))s"
grep SHAPES $OUT/r/shapes.txt | cut -c1-500
LEFT=$((480 - SECONDS)); echo "suite gets ${LEFT}s"
timeout $LEFT python3 scripts/gpu/inductor_suite.py $B/hostjit /tmp/suite6 --jobs 6 gpt2_model mlp attention chunk_mm swiglu_f16 gpt2_block dynamic_gpt2_block dynamic_mlp dynamic_attention bf16_linear_gelu cross_entropy sgd dynamic_ln_gelu adam softmax_f16 layer_norm_bf16 rms_norm cumsum logsumexp max_argmax embedding_sum causal_softmax batch_norm_eval permute_scale conv_bn_relu > $OUT/r/suite.txt 2>&1; echo "suite rc=$?"
grep -h '^RESULT' /tmp/suite6/*.log > $OUT/r/results.txt; cut -c1-420 $OUT/r/results.txt
cd $OUT && tar czf r.tgz r && rm -rf r
true
