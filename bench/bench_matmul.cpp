// bench_matmul.cpp - host cost of one matmul on the CUDA backend: GPT-2's
// QKV projection (x [64, 768] times w [2304, 768] transposed, plus bias,
// a 4 MiB workspace) as cublasLtMatmul called directly with its plan made
// once, and as hj_matmul, on one stream, in one run. Each iteration times a batch of calls being
// issued; the stream is drained after the batch, outside the timing.
#include <benchmark/benchmark.h>
#include <cublasLt.h>  // types and prototypes only: the library is loaded with dlopen
#include <dlfcn.h>

#include "cuda_bench.h"

using namespace hostjit;

namespace {

constexpr int kBatch = 64;
constexpr int64_t kM = 64, kK = 768, kN = 2304, kWorkspace = 4 << 20;

struct Setup {
  std::shared_ptr<Runtime> rt;
  void *x = nullptr, *w = nullptr, *b = nullptr, *y = nullptr, *ws = nullptr;
  std::string error;
  Setup() {
    auto r = bench::cudaBenchRuntime();
    if (!r) {
      error = r.error().message;
      return;
    }
    rt = *r;
    hj_context *ctx = rt->context();
    int64_t xs[] = {kM, kK}, wsz[] = {kN, kK}, bs[] = {kN}, ys[] = {kM, kN}, wb[] = {kWorkspace};
    if (hj_alloc(ctx, xs, nullptr, 2, HJ_DTYPE_f32, HJ_ALLOC_ZERO_INIT, "x", &x) ||
        hj_alloc(ctx, wsz, nullptr, 2, HJ_DTYPE_f32, HJ_ALLOC_ZERO_INIT, "w", &w) ||
        hj_alloc(ctx, bs, nullptr, 1, HJ_DTYPE_f32, HJ_ALLOC_ZERO_INIT, "b", &b) ||
        hj_alloc(ctx, ys, nullptr, 2, HJ_DTYPE_f32, 0, "y", &y) || hj_alloc(ctx, wb, nullptr, 1, HJ_DTYPE_u8, 0, "ws", &ws))
      error = hj_last_error();
  }
  ~Setup() {
    if (!rt) return;
    for (void *p : {x, w, b, y, ws})
      if (p) hj_free(rt->context(), p);
  }
  // hj_matmul's dims of y = x w^T: per operand batches, rows, cols and strides.
  void dims(int64_t *d) const {
    int64_t v[HJ_MM_DIMS] = {1, kM, kK, 0, kK, 1, 1, kN, kK, 0, kK, 1, 1, kM, kN, 0, kN, 1, kN, kWorkspace};
    for (int i = 0; i < HJ_MM_DIMS; ++i) d[i] = v[i];
  }
};

// cuBLASLt called directly: the descriptors, layouts and algorithm made
// once, as hostjit's plan does; each call sets the bias and multiplies.
void BM_Matmul_bare(benchmark::State &state) {
  Setup s;
  if (!s.error.empty()) return state.SkipWithError(s.error.c_str());
  void *lib = dlopen("libcublasLt.so.13", RTLD_NOW | RTLD_LOCAL);
  if (!lib) lib = dlopen("libcublasLt.so.12", RTLD_NOW | RTLD_LOCAL);
  if (!lib) return state.SkipWithError("no cuBLASLt");
#define FN(name) auto name = reinterpret_cast<decltype(&::name)>(dlsym(lib, #name))
  FN(cublasLtCreate);
  FN(cublasLtMatmulDescCreate);
  FN(cublasLtMatmulDescSetAttribute);
  FN(cublasLtMatrixLayoutCreate);
  FN(cublasLtMatmulPreferenceCreate);
  FN(cublasLtMatmulPreferenceSetAttribute);
  FN(cublasLtMatmulAlgoGetHeuristic);
  FN(cublasLtMatmul);
#undef FN
  cublasLtHandle_t h;
  cublasLtCreate(&h);
  cublasLtMatmulDesc_t desc;
  cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F);
  cublasOperation_t t = CUBLAS_OP_T, n = CUBLAS_OP_N;
  cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &t, sizeof t);
  cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &n, sizeof n);
  cublasLtEpilogue_t e = CUBLASLT_EPILOGUE_BIAS;
  cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &e, sizeof e);
  cublasLtMatrixLayout_t la, lb, lc;  // C^T = W x^T in column-major
  cublasLtMatrixLayoutCreate(&la, CUDA_R_32F, kK, kN, kK);
  cublasLtMatrixLayoutCreate(&lb, CUDA_R_32F, kK, kM, kK);
  cublasLtMatrixLayoutCreate(&lc, CUDA_R_32F, kN, kM, kN);
  cublasLtMatmulPreference_t pref;
  cublasLtMatmulPreferenceCreate(&pref);
  uint64_t wsBytes = kWorkspace;
  cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &wsBytes, sizeof wsBytes);
  cublasLtMatmulHeuristicResult_t r{};
  int found = 0;
  cublasLtMatmulAlgoGetHeuristic(h, desc, la, lb, lc, lc, pref, 1, &r, &found);
  if (!found) return state.SkipWithError("no algorithm");
  auto stream = static_cast<cudaStream_t>(hj_context_native_stream(s.rt->context()));
  float alpha = 1, beta = 0;
  bench::timeBatches(state, *s.rt, kBatch, [&] {
    const void *bias = s.b;
    cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias);
    cublasLtMatmul(h, desc, &alpha, s.w, la, s.x, lb, &beta, s.y, lc, s.y, lc, &r.algo, s.ws, kWorkspace, stream);
  });
}

void BM_Matmul_hj(benchmark::State &state) {
  Setup s;
  if (!s.error.empty()) return state.SkipWithError(s.error.c_str());
  int64_t d[HJ_MM_DIMS];
  s.dims(d);
  hj_context *ctx = s.rt->context();
  bench::timeBatches(state, *s.rt, kBatch, [&] {
    hj_matmul(ctx, s.x, s.w, s.y, s.b, s.ws, d, HJ_DTYPE_f32 | HJ_DTYPE_f32 << 8, HJ_MM_TRANSPOSE_B | HJ_MM_BIAS, 1.0,
              0.0, "bench");
  });
  state.counters["library_calls"] = static_cast<double>(s.rt->stats().library_calls);
}

}  // namespace

BENCHMARK(BM_Matmul_bare)->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Matmul_hj)->UseManualTime()->Unit(benchmark::kMicrosecond);

BENCHMARK_MAIN();
