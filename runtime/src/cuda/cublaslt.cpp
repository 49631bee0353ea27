// cublaslt.cpp - matrix multiplies through cuBLASLt: the library loaded once
// per process, a plan per shape, row-major operands passed as the
// column-major transposes cuBLASLt expects.
#include "cuda/cublaslt.h"

#ifdef HOSTJIT_HAVE_NVRTC

#include <cublasLt.h>  // types and prototypes only: cuBLASLt is never linked

#include <algorithm>
#include <bit>
#include <cinttypes>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "base/dtypes.h"
#include "base/error.h"
#include "base/shared_library.h"
#include "cuda/blas_dtype.h"

namespace hj {

namespace {

struct Library {
#define HJ_CUBLASLT_FN(sym) decltype(&::sym) sym = nullptr;
#include "cuda/cublaslt_api.def"
#undef HJ_CUBLASLT_FN
  std::string error;  // why it cannot be used; empty when it can
};

Library loadLibrary() {
  Library l;
  void *h = nullptr;
  l.error = openCudaLibrary("cuBLASLt", "cuBLAS", "HOSTJIT_CUBLASLT", "libcublasLt", &h);
#define HJ_CUBLASLT_FN(sym) \
  if (l.error.empty() && !(l.sym = librarySymbol<decltype(&::sym)>(h, #sym))) l.error = missingSymbol("cuBLASLt", #sym);
#include "cuda/cublaslt_api.def"
#undef HJ_CUBLASLT_FN
  return l;
}

const Library &library() {
  static const Library l = loadLibrary();  // thread-safe, once per process
  return l;
}

std::string statusText(const Library &l, cublasStatus_t s) {
  const char *t = l.cublasLtGetStatusString ? l.cublasLtGetStatusString(s) : nullptr;
  return t ? std::string(t) + " (" + std::to_string(int(s)) + ")" : "status " + std::to_string(int(s));
}

}  // namespace

// The descriptors of one shape and the algorithm chosen for it.
struct CublasLt::Plan {
  const Library &l;
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;  // cuBLASLt's A (our B), B (our A), C
  cublasLtMatmulAlgo_t algo{};
  explicit Plan(const Library &lib) : l(lib) {}
  ~Plan() {
    if (desc) l.cublasLtMatmulDescDestroy(desc);
    for (cublasLtMatrixLayout_t x : {a, b, c})
      if (x) l.cublasLtMatrixLayoutDestroy(x);
  }
};

CublasLt::CublasLt() = default;

CublasLt::~CublasLt() {
  plans_.clear();
  if (handle_) library().cublasLtDestroy(static_cast<cublasLtHandle_t>(handle_));
}

namespace {

// The largest power of two up to 256 that divides the address. cuBLASLt's
// heuristic assumes 256-byte aligned operands unless told otherwise, and a
// view at an element offset (a slice Inductor takes of a buffer) can be
// aligned to its element size only: an algorithm that needs more would
// read it wrong. The plan is chosen for the alignments the call has.
uint32_t alignmentOf(const void *p) {
  uintptr_t a = reinterpret_cast<uintptr_t>(p) | 256;  // 256 when aligned at least that well
  return uint32_t(1) << std::countr_zero(a);
}

}  // namespace

int32_t CublasLt::matmul(const MatmulCall &m, CUstream stream, int32_t ordinal) {
  const Library &l = library();
  if (!l.error.empty()) return fail(HJ_ERR_NOT_FOUND, "%s: %s", m.site, l.error.c_str());
  auto refused = [&](const char *what, cublasStatus_t s) {
    return fail(HJ_ERR_BACKEND, "%s: cuBLASLt refused %s on CUDA device %d: %s", m.site, what, ordinal,
                statusText(l, s).c_str());
  };
  if (!handle_) {
    cublasLtHandle_t h = nullptr;
    if (cublasStatus_t s = l.cublasLtCreate(&h)) return refused("cublasLtCreate", s);
    handle_ = h;
  }
  uint32_t alignA = alignmentOf(m.a), alignB = alignmentOf(m.b), alignC = alignmentOf(m.c);
  Key key = {m.batch, m.m, m.n, m.k, m.batchStride[0], m.batchStride[1], m.batchStride[2], m.rowStride[0],
             m.rowStride[1], m.rowStride[2], int64_t(m.workspaceBytes), m.aType, m.cType, m.flags,
             int64_t(alignA) | int64_t(alignB) << 16 | int64_t(alignC) << 32};
  auto it = plans_.find(key);
  if (it == plans_.end()) {
    // Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: a
    // row-major matrix read column-major is its transpose. So cuBLASLt's A
    // is our B (transposed as ours is), its B our A, m and n swap.
    auto p = std::make_unique<Plan>(l);
    bool ta = m.flags & HJ_MM_TRANSPOSE_A, tb = m.flags & HJ_MM_TRANSPOSE_B;
    uint64_t M = m.m, N = m.n, K = m.k;
    cudaDataType_t in = blasType(m.aType), out = blasType(m.cType);
    if (cublasStatus_t s = l.cublasLtMatmulDescCreate(&p->desc, CUBLAS_COMPUTE_32F, CUDA_R_32F))
      return refused("cublasLtMatmulDescCreate", s);
    cublasOperation_t opA = tb ? CUBLAS_OP_T : CUBLAS_OP_N, opB = ta ? CUBLAS_OP_T : CUBLAS_OP_N;
    l.cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_TRANSA, &opA, sizeof opA);
    l.cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_TRANSB, &opB, sizeof opB);
    if (m.flags & HJ_MM_BIAS) {
      cublasLtEpilogue_t e = CUBLASLT_EPILOGUE_BIAS;
      l.cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &e, sizeof e);
    }
    struct Layout {
      cublasLtMatrixLayout_t *out;
      cudaDataType_t type;
      uint64_t rows, cols;
      int64_t ld, batchStride;
    } layouts[] = {
        {&p->a, in, tb ? K : N, tb ? N : K, m.rowStride[1], m.batchStride[1]},
        {&p->b, in, ta ? M : K, ta ? K : M, m.rowStride[0], m.batchStride[0]},
        {&p->c, out, N, M, m.rowStride[2], m.batchStride[2]},
    };
    for (const Layout &x : layouts) {
      // A leading dimension below the rows is refused even for one column.
      int64_t ld = std::max<int64_t>(x.ld, int64_t(x.rows));
      if (cublasStatus_t s = l.cublasLtMatrixLayoutCreate(x.out, x.type, x.rows, x.cols, ld))
        return refused("cublasLtMatrixLayoutCreate", s);
      int32_t count = int32_t(m.batch);
      int64_t stride = x.batchStride;
      l.cublasLtMatrixLayoutSetAttribute(*x.out, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof count);
      l.cublasLtMatrixLayoutSetAttribute(*x.out, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof stride);
    }
    cublasLtMatmulPreference_t pref = nullptr;
    if (cublasStatus_t s = l.cublasLtMatmulPreferenceCreate(&pref)) return refused("cublasLtMatmulPreferenceCreate", s);
    uint64_t ws = m.workspaceBytes;
    l.cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws);
    // cuBLASLt's A is our B and its B our A (above); C and D are our C.
    l.cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &alignB, sizeof alignB);
    l.cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &alignA, sizeof alignA);
    l.cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &alignC, sizeof alignC);
    l.cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &alignC, sizeof alignC);
    cublasLtMatmulHeuristicResult_t result{};
    int found = 0;
    cublasStatus_t s = l.cublasLtMatmulAlgoGetHeuristic(static_cast<cublasLtHandle_t>(handle_), p->desc, p->a, p->b,
                                                        p->c, p->c, pref, 1, &result, &found);
    l.cublasLtMatmulPreferenceDestroy(pref);
    if (s != CUBLAS_STATUS_SUCCESS || found == 0)
      return fail(HJ_ERR_BACKEND,
                  "%s: cuBLASLt has no algorithm for batch %" PRId64 " of %" PRId64 " x %" PRId64 " x %" PRId64
                  " (%s in, %s out) with a workspace of %" PRIu64 " bytes on CUDA device %d: %s",
                  m.site, m.batch, m.m, m.n, m.k, dtypeName(m.aType), dtypeName(m.cType), ws,
                  ordinal,
                  s ? statusText(l, s).c_str() : "none found");
    p->algo = result.algo;
    it = plans_.emplace(key, std::move(p)).first;
  }
  Plan &p = *it->second;
  if (m.flags & HJ_MM_BIAS) {
    const void *bias = m.bias;
    l.cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias);
  }
  float alpha = float(m.alpha), beta = float(m.beta);
  cublasStatus_t s = l.cublasLtMatmul(static_cast<cublasLtHandle_t>(handle_), p.desc, &alpha, m.b, p.a, m.a, p.b,
                                      &beta, m.c, p.c, m.c, p.c, &p.algo, m.workspace,
                                      static_cast<size_t>(m.workspaceBytes), stream);
  if (s != CUBLAS_STATUS_SUCCESS) return refused("the multiply", s);
  return HJ_OK;
}

}  // namespace hj

#endif  // HOSTJIT_HAVE_NVRTC
