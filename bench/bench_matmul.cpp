// bench_matmul.cpp - host cost of one matmul on the CUDA backend, for each
// kind of matmul a GPT-2 small forward at B = 1, T = 64 makes
// (examples/gpt2/gpt2_small.hir: per layer the QKV projection, the two
// batched attention products, the output projection, the two MLP
// products; then the logits), as cublasLtMatmul called directly with its
// plan made once, and as hj_matmul with and without the context's replays
// of captured matmuls, on one stream, in one run. Each
// iteration times a batch of calls being issued; the stream is drained
// after the batch, outside the timing. `per_forward` counts the shape's
// calls in one forward, so the bare medians weighted by it, plus the
// launches at a bare cuLaunchKernel's cost, are the floor of an eager
// forward's host time.
#include <benchmark/benchmark.h>
#include <cublasLt.h>  // types and prototypes only: the library is loaded with dlopen
#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>

#include "cuda_bench.h"

using namespace hostjit;

namespace {

constexpr int kBatch = 64;
constexpr int64_t kWorkspace = 4 << 20;

// A row-major product C[batch] = alpha op(A) op(B) + beta C (+ bias), as the
// matmul statement takes it: A m x k (k x m with ta), B k x n (n x k with
// tb), contiguous batches.
struct Shape {
  const char *name;
  int64_t batch, m, n, k;
  bool ta, tb, bias;
  double alpha, beta;
  int perForward;
};
const Shape kShapes[] = {
    {"qkv", 1, 64, 2304, 768, false, true, true, 1.0, 0.0, 12},
    {"scores", 12, 64, 64, 64, false, true, false, 0.125, 0.0, 12},
    {"weighted", 12, 64, 64, 64, false, false, false, 1.0, 0.0, 12},
    {"proj", 1, 64, 768, 768, false, true, true, 1.0, 1.0, 12},
    {"fc", 1, 64, 3072, 768, false, true, true, 1.0, 0.0, 12},
    {"mlp", 1, 64, 768, 3072, false, true, true, 1.0, 1.0, 12},
    {"logits", 1, 64, 50257, 768, false, true, false, 1.0, 0.0, 1},
};

struct Setup {
  std::shared_ptr<Runtime> rt;
  const Shape &s;
  void *a = nullptr, *b = nullptr, *bias = nullptr, *c = nullptr, *ws = nullptr;
  int64_t aRows, aCols, bRows, bCols;
  std::string error;
  explicit Setup(const Shape &shape) : s(shape) {
    aRows = s.ta ? s.k : s.m, aCols = s.ta ? s.m : s.k;
    bRows = s.tb ? s.n : s.k, bCols = s.tb ? s.k : s.n;
    auto r = bench::cudaBenchRuntime();
    if (!r) {
      error = r.error().message;
      return;
    }
    rt = *r;
    hj_context *ctx = rt->context();
    int64_t as[] = {s.batch, aRows, aCols}, bs[] = {s.batch, bRows, bCols}, cs[] = {s.batch, s.m, s.n},
            vs[] = {s.n}, wb[] = {kWorkspace};
    if (hj_alloc(ctx, as, nullptr, 3, HJ_DTYPE_f32, HJ_ALLOC_ZERO_INIT, "a", &a) ||
        hj_alloc(ctx, bs, nullptr, 3, HJ_DTYPE_f32, HJ_ALLOC_ZERO_INIT, "b", &b) ||
        hj_alloc(ctx, vs, nullptr, 1, HJ_DTYPE_f32, HJ_ALLOC_ZERO_INIT, "bias", &bias) ||
        hj_alloc(ctx, cs, nullptr, 3, HJ_DTYPE_f32, HJ_ALLOC_ZERO_INIT, "c", &c) ||
        hj_alloc(ctx, wb, nullptr, 1, HJ_DTYPE_u8, 0, "ws", &ws))
      error = hj_last_error();
  }
  ~Setup() {
    if (!rt) return;
    for (void *p : {a, b, bias, c, ws})
      if (p) hj_free(rt->context(), p);
  }
  // hj_matmul's dims: per operand batches, rows, cols and strides.
  void dims(int64_t *d) const {
    int64_t v[HJ_MM_DIMS] = {s.batch, aRows,  aCols, aRows * aCols, aCols, 1, s.batch, bRows, bCols, bRows * bCols,
                             bCols,   1,      s.batch, s.m,   s.n,  s.m * s.n, s.n, 1, s.bias ? s.n : 0, 1, kWorkspace};
    std::copy(v, v + HJ_MM_DIMS, d);
  }
};

void counters(benchmark::State &state, const Shape &s) {
  state.counters["per_forward"] = s.perForward;
  state.SetLabel(s.name);
}

// cuBLASLt called directly: the descriptors, layouts and algorithm made
// once, as hostjit's plan does (row-major C = op(A) op(B) handed over as
// column-major C^T = op(B)^T op(A)^T); each call sets the bias and
// multiplies.
void BM_Matmul_bare(benchmark::State &state, const Shape &shape) {
  Setup s(shape);
  if (!s.error.empty()) return state.SkipWithError(s.error.c_str());
  void *lib = dlopen("libcublasLt.so.13", RTLD_NOW | RTLD_LOCAL);
  if (!lib) lib = dlopen("libcublasLt.so.12", RTLD_NOW | RTLD_LOCAL);
  if (!lib) return state.SkipWithError("no cuBLASLt");
#define FN(name) auto name = reinterpret_cast<decltype(&::name)>(dlsym(lib, #name))
  FN(cublasLtCreate);
  FN(cublasLtMatmulDescCreate);
  FN(cublasLtMatmulDescSetAttribute);
  FN(cublasLtMatrixLayoutCreate);
  FN(cublasLtMatrixLayoutSetAttribute);
  FN(cublasLtMatmulPreferenceCreate);
  FN(cublasLtMatmulPreferenceSetAttribute);
  FN(cublasLtMatmulAlgoGetHeuristic);
  FN(cublasLtMatmul);
#undef FN
  cublasLtHandle_t h;
  cublasLtCreate(&h);
  cublasLtMatmulDesc_t desc;
  cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F);
  cublasOperation_t opA = shape.tb ? CUBLAS_OP_T : CUBLAS_OP_N, opB = shape.ta ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &opA, sizeof opA);
  cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &opB, sizeof opB);
  if (shape.bias) {
    cublasLtEpilogue_t e = CUBLASLT_EPILOGUE_BIAS;
    cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &e, sizeof e);
  }
  uint64_t M = shape.m, N = shape.n, K = shape.k;
  struct {
    cublasLtMatrixLayout_t *out;
    uint64_t rows, cols;
    int64_t ld, stride;
  } layouts[] = {{nullptr, shape.tb ? K : N, shape.tb ? N : K, s.bCols, s.bRows * s.bCols},
                 {nullptr, shape.ta ? M : K, shape.ta ? K : M, s.aCols, s.aRows * s.aCols},
                 {nullptr, N, M, int64_t(N), int64_t(M * N)}};
  cublasLtMatrixLayout_t la, lb, lc;
  layouts[0].out = &la, layouts[1].out = &lb, layouts[2].out = &lc;
  for (auto &x : layouts) {
    cublasLtMatrixLayoutCreate(x.out, CUDA_R_32F, x.rows, x.cols, std::max<int64_t>(x.ld, int64_t(x.rows)));
    int32_t count = int32_t(shape.batch);
    cublasLtMatrixLayoutSetAttribute(*x.out, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof count);
    cublasLtMatrixLayoutSetAttribute(*x.out, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &x.stride, sizeof x.stride);
  }
  cublasLtMatmulPreference_t pref;
  cublasLtMatmulPreferenceCreate(&pref);
  uint64_t wsBytes = kWorkspace;
  cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &wsBytes, sizeof wsBytes);
  cublasLtMatmulHeuristicResult_t r{};
  int found = 0;
  cublasLtMatmulAlgoGetHeuristic(h, desc, la, lb, lc, lc, pref, 1, &r, &found);
  if (!found) return state.SkipWithError("no algorithm");
  auto stream = static_cast<cudaStream_t>(hj_context_native_stream(s.rt->context()));
  float alpha = float(shape.alpha), beta = float(shape.beta);
  bench::timeBatches(state, *s.rt, kBatch, [&] {
    if (shape.bias) {
      const void *bias = s.bias;
      cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias);
    }
    cublasLtMatmul(h, desc, &alpha, s.b, la, s.a, lb, &beta, s.c, lc, s.c, lc, &r.algo, s.ws, kWorkspace, stream);
  });
  counters(state, shape);
}

// hj_matmul with the context's replays (HOSTJIT_MATMUL_REPLAYS's default:
// the call launches its captured graph from the second call on), or
// without (0: cuBLASLt called every time).
void BM_Matmul_hj(benchmark::State &state, const Shape &shape, bool replays) {
  if (replays)
    unsetenv("HOSTJIT_MATMUL_REPLAYS");
  else
    setenv("HOSTJIT_MATMUL_REPLAYS", "0", 1);
  Setup s(shape);  // its runtime's first matmul reads the setting
  if (!s.error.empty()) return state.SkipWithError(s.error.c_str());
  int64_t d[HJ_MM_DIMS];
  s.dims(d);
  hj_context *ctx = s.rt->context();
  uint32_t flags = (shape.ta ? uint32_t(HJ_MM_TRANSPOSE_A) : 0u) | (shape.tb ? uint32_t(HJ_MM_TRANSPOSE_B) : 0u) |
                   (shape.bias ? uint32_t(HJ_MM_BIAS) : 0u);
  bench::timeBatches(state, *s.rt, kBatch, [&] {
    hj_matmul(ctx, s.a, s.b, s.c, shape.bias ? s.bias : nullptr, s.ws, d, HJ_DTYPE_f32 | HJ_DTYPE_f32 << 8, flags,
              shape.alpha, shape.beta, "bench");
  });
  if (s.rt->stats().library_calls == 0) return state.SkipWithError(hj_last_error());
  state.counters["replayed"] = double(s.rt->stats().library_replays) / double(s.rt->stats().library_calls);
  counters(state, shape);
}

int registered = [] {
  for (const Shape &s : kShapes) {
    benchmark::RegisterBenchmark((std::string("BM_Matmul_bare/") + s.name).c_str(), BM_Matmul_bare, s)
        ->UseManualTime()
        ->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark((std::string("BM_Matmul_hj/") + s.name).c_str(), BM_Matmul_hj, s, true)
        ->UseManualTime()
        ->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark((std::string("BM_Matmul_hj_direct/") + s.name).c_str(), BM_Matmul_hj, s, false)
        ->UseManualTime()
        ->Unit(benchmark::kMicrosecond);
  }
  return 0;
}();

}  // namespace

BENCHMARK_MAIN();
