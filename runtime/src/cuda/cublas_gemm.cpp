// cublas_gemm.cpp - matrix multiplies without a bias through cuBLAS's gemm,
// called as PyTorch calls it for mm and bmm: the library loaded once per
// process, row-major operands passed as the column-major transposes cuBLAS
// expects, leading dimensions adjusted as PyTorch adjusts them.
#include "cuda/cublas_gemm.h"

#ifdef HOSTJIT_HAVE_NVRTC

#include <cublas_api.h>  // types and prototypes only: cuBLAS is never linked

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "base/dtypes.h"
#include "base/error.h"
#include "base/shared_library.h"
#include "cuda/blas_dtype.h"

namespace hj {

namespace {

// The C functions of two names <cublas_api.h> also overloads for C++.
using GemmExFn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void *,
                                    const void *, cudaDataType, int, const void *, cudaDataType, int, const void *,
                                    void *, cudaDataType, int, cublasComputeType_t, cublasGemmAlgo_t);
using GemmStridedBatchedExFn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                                                  const void *, const void *, cudaDataType, int, long long,
                                                  const void *, cudaDataType, int, long long, const void *, void *,
                                                  cudaDataType, int, long long, int, cublasComputeType_t,
                                                  cublasGemmAlgo_t);

struct Library {
#define HJ_CUBLAS_FN(sym, type) type sym = nullptr;
#include "cuda/cublas_api.def"
#undef HJ_CUBLAS_FN
  std::string error;  // why it cannot be used; empty when it can
};

Library loadLibrary() {
  Library l;
  void *h = nullptr;
  l.error = openCudaLibrary("cuBLAS", "cuBLAS", "HOSTJIT_CUBLAS", "libcublas", &h);
#define HJ_CUBLAS_FN(sym, type) \
  if (l.error.empty() && !(l.sym = librarySymbol<type>(h, #sym))) l.error = missingSymbol("cuBLAS", #sym);
#include "cuda/cublas_api.def"
#undef HJ_CUBLAS_FN
  return l;
}

const Library &library() {
  static const Library l = loadLibrary();  // thread-safe, once per process
  return l;
}

// PyTorch's _cublasAdjustLdLevel3: a leading dimension that cannot matter
// (one row or column) set to what cuBLAS checks it against.
void adjustLeadingDims(bool ta, bool tb, int64_t m, int64_t n, int64_t k, int64_t &lda, int64_t &ldb,
                       int64_t &ldc) {
  if (n <= 1) ldc = std::max<int64_t>(m, 1);
  if (ta) {
    if (m <= 1) lda = std::max<int64_t>(k, 1);
  } else if (k <= 1) {
    lda = std::max<int64_t>(m, 1);
  }
  if (tb) {
    if (k <= 1) ldb = std::max<int64_t>(n, 1);
  } else if (n <= 1) {
    ldb = std::max<int64_t>(k, 1);
  }
}

}  // namespace

CublasGemm::~CublasGemm() {
  if (handle_) library().cublasDestroy_v2(static_cast<cublasHandle_t>(handle_));
}

int32_t CublasGemm::matmul(const MatmulCall &m, CUstream stream, int32_t ordinal) {
  const Library &l = library();
  if (!l.error.empty()) return fail(HJ_ERR_NOT_FOUND, "%s: %s", m.site, l.error.c_str());
  auto refused = [&](const char *what, cublasStatus_t s) {
    const char *t = l.cublasGetStatusString(s);
    return fail(HJ_ERR_BACKEND, "%s: cuBLAS refused %s on CUDA device %d: %s (%d)", m.site, what, ordinal,
                t ? t : "unknown status", int(s));
  };
  if (m.flags & HJ_MM_BIAS) return fail(HJ_ERR_INTERNAL, "%s: a bias goes through cuBLASLt, not cuBLAS", m.site);
  if (!handle_) {
    cublasHandle_t h = nullptr;
    if (cublasStatus_t s = l.cublasCreate_v2(&h)) return refused("cublasCreate", s);
    handle_ = h;
    // PyTorch's math mode with TF32 off, its default: f32 products in f32.
    if (cublasStatus_t s = l.cublasSetMathMode(h, CUBLAS_DEFAULT_MATH)) return refused("cublasSetMathMode", s);
  }
  auto h = static_cast<cublasHandle_t>(handle_);
  if (cublasStatus_t s = l.cublasSetStream_v2(h, reinterpret_cast<cudaStream_t>(stream)))
    return refused("cublasSetStream", s);
  // The call's workspace, or none: cuBLAS then picks among the algorithms
  // that need none, and never allocates one of its own (which a graph's
  // capture could not hold).
  if (cublasStatus_t s = l.cublasSetWorkspace_v2(h, m.workspace, m.workspace ? m.workspaceBytes : 0))
    return refused("cublasSetWorkspace", s);
  // Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: cuBLAS's
  // A is our B, its B our A, m and n swap (as PyTorch passes a row-major
  // result).
  bool ta = m.flags & HJ_MM_TRANSPOSE_B, tb = m.flags & HJ_MM_TRANSPOSE_A;
  int64_t M = m.n, N = m.m, K = m.k;
  int64_t lda = m.rowStride[1], ldb = m.rowStride[0], ldc = m.rowStride[2];
  adjustLeadingDims(ta, tb, M, N, K, lda, ldb, ldc);
  for (int64_t v : {M, N, K, lda, ldb, ldc, m.batch})
    if (v > INT32_MAX)
      return fail(HJ_ERR_INVALID_ARGUMENT, "%s: a dimension or leading dimension of %lld is past cuBLAS's int range", m.site,
                  static_cast<long long>(v));
  cublasOperation_t opa = ta ? CUBLAS_OP_T : CUBLAS_OP_N, opb = tb ? CUBLAS_OP_T : CUBLAS_OP_N;
  float alpha = float(m.alpha), beta = float(m.beta);
  int im = int(M), in = int(N), ik = int(K), ilda = int(lda), ildb = int(ldb), ildc = int(ldc);
  bool f32 = m.aType == HJ_DTYPE_f32 && m.cType == HJ_DTYPE_f32;
  cublasStatus_t s;
  if (m.batch == 1 && f32) {
    s = l.cublasSgemm_v2(h, opa, opb, im, in, ik, &alpha, static_cast<const float *>(m.b), ilda,
                         static_cast<const float *>(m.a), ildb, &beta, static_cast<float *>(m.c), ildc);
  } else if (f32) {
    s = l.cublasSgemmStridedBatched(h, opa, opb, im, in, ik, &alpha, static_cast<const float *>(m.b), ilda,
                                    m.batchStride[1], static_cast<const float *>(m.a), ildb, m.batchStride[0],
                                    &beta, static_cast<float *>(m.c), ildc, m.batchStride[2], int(m.batch));
  } else if (m.batch == 1) {
    s = l.cublasGemmEx(h, opa, opb, im, in, ik, &alpha, m.b, blasType(m.aType), ilda, m.a, blasType(m.aType), ildb,
                       &beta, m.c, blasType(m.cType), ildc, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT_TENSOR_OP);
  } else {
    s = l.cublasGemmStridedBatchedEx(h, opa, opb, im, in, ik, &alpha, m.b, blasType(m.aType), ilda, m.batchStride[1],
                                     m.a, blasType(m.aType), ildb, m.batchStride[0], &beta, m.c, blasType(m.cType),
                                     ildc, m.batchStride[2], int(m.batch), CUBLAS_COMPUTE_32F,
                                     CUBLAS_GEMM_DEFAULT_TENSOR_OP);
  }
  if (s != CUBLAS_STATUS_SUCCESS) return refused("the multiply", s);
  return HJ_OK;
}

}  // namespace hj

#endif  // HOSTJIT_HAVE_NVRTC
