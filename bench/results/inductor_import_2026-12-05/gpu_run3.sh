#!/usr/bin/env bash
# GPU run 3: matmuls without a bias through cuBLAS's gemm (as PyTorch's mm
# and bmm), the recorder giving PyTorch's workspaces: the GPU suite, the
# hidden no-library tests, memcheck over [matmul] and [graph], the Inductor
# suite's matmul programs and the 200-shape run. Binaries of the working
# tree (C++ as committed next); Python files from the working tree.
export NCCL_NVLS_ENABLE=0 HOSTJIT_SOURCE_DIR=$PWD HOSTJIT_CACHE_DIR=/tmp/hjcache
B=/tmp/b
mkdir -p $B/py/hostjit $OUT/r && tar xJf carry/m3.tar.xz -C $B && cp $B/hostjit_py/*.so $B/py/hostjit/
cp python/hostjit/__init__.py python/hostjit/inductor.py $B/py/hostjit/
export PYTHONPATH=$B/py
t=$B/hostjit_gpu_tests
{ date -u; nvidia-smi -L; ls -la /usr/local/cuda/lib64/libcublas.so* 2>&1 | head -3; } > $OUT/r/info.txt
SECONDS=0
timeout 200 $t '~[fault]' > $OUT/r/gpu_tests.log 2>&1; echo "rc=$?" >> $OUT/r/gpu_tests.log; echo "gpu tests: $(tail -3 $OUT/r/gpu_tests.log | tr '\n' ' ') ${SECONDS}s"
HOSTJIT_CUBLAS=/nonexistent/libcublas.so timeout 60 $t '[.no_cublas]' > $OUT/r/no_cublas.log 2>&1; echo "no cublas rc=$? $(tail -2 $OUT/r/no_cublas.log | tr '\n' ' ')"
HOSTJIT_CUBLASLT=/nonexistent/libcublasLt.so timeout 60 $t '[.no_cublaslt]' > $OUT/r/no_cublaslt.log 2>&1; echo "no cublaslt rc=$? $(tail -2 $OUT/r/no_cublaslt.log | tr '\n' ' ')"
SECONDS=0
timeout 150 compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 3 $t '[matmul],[graph]' > $OUT/r/memcheck.log 2>&1; echo "memcheck rc=$? ${SECONDS}s"
grep -E "ERROR SUMMARY|All tests|test cases" $OUT/r/memcheck.log | head -3
SECONDS=0
timeout 260 python3 scripts/gpu/inductor_suite.py $B/hostjit /tmp/suite --jobs 4 mlp attention chunk_mm swiglu_f16 bf16_linear_gelu dynamic_mlp dynamic_attention gpt2_block dynamic_gpt2_block > $OUT/r/suite.txt 2>&1; echo "suite rc=$? ${SECONDS}s"
grep RESULT $OUT/r/suite.txt | cut -c1-700
for f in /tmp/suite/*.log; do grep -q '"error"' $f && tail -25 $f > $OUT/r/$(basename $f).tail; done
SECONDS=0
timeout 120 python3 scripts/gpu/inductor_shapes.py /tmp/shapes dynamic_attention dynamic_gpt2_block dynamic_mlp > $OUT/r/shapes.txt 2>&1; echo "shapes rc=$? ${SECONDS}s"
grep SHAPES $OUT/r/shapes.txt | cut -c1-600
cd $OUT && tar czf r.tgz r && rm -rf r
true
