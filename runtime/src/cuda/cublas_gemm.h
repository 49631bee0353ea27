// cublas_gemm.h - hj_matmul without a bias on CUDA: cuBLAS's gemm, called as
// PyTorch calls it for mm and bmm, so that a program Inductor made computes
// what PyTorch computes, bit for bit. cuBLAS is loaded with dlopen the
// first time (cublas_api.def lists what is used).
#pragma once

#ifdef HOSTJIT_HAVE_NVRTC

#include <cuda.h>

#include "base/call_path.h"

namespace hj {

// One context's cuBLAS handle. Used by one thread at a time, with the
// device's context current.
class CublasGemm {
 public:
  CublasGemm() = default;
  ~CublasGemm();
  CublasGemm(const CublasGemm &) = delete;
  CublasGemm &operator=(const CublasGemm &) = delete;
  // Queues c (no HJ_MM_BIAS) on `stream`: cublasSgemm for f32 (cublasGemmEx
  // for f16 and bf16, products summed in f32), their strided-batched forms
  // when c.batch > 1; the call's workspace, or none, set as cuBLAS's.
  // Errors: HJ_ERR_NOT_FOUND "no cuBLAS: ..." when the library cannot be
  // loaded; HJ_ERR_BACKEND naming the statement (its site) and cuBLAS's
  // status for a call it refuses.
  int32_t matmul(const MatmulCall &c, CUstream stream, int32_t ordinal);

 private:
  void *handle_ = nullptr;  // cublasHandle_t, made on first use
};

}  // namespace hj

#endif  // HOSTJIT_HAVE_NVRTC
