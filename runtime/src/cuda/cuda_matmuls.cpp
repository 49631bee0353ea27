// cuda_matmuls.cpp - a CUDA context's matmuls: library, workspace, replay.
#include "cuda/cuda_matmuls.h"

#ifdef HOSTJIT_HAVE_NVRTC

#include "cuda/cublas_gemm.h"
#include "cuda/cublaslt.h"
#include "cuda/matmul_replays.h"
#include "cuda/matmul_workspace.h"

namespace hj {

CudaMatmuls::CudaMatmuls(const Driver &d, int32_t ordinal, int ccMajor, int ccMinor,
                         std::function<int32_t(const char *, CUresult)> driverError)
    : d_(d), ordinal_(ordinal), ccMajor_(ccMajor), ccMinor_(ccMinor), driverError_(std::move(driverError)) {}

CudaMatmuls::~CudaMatmuls() {
  replays_.reset();  // the graphs before the libraries whose kernels they hold
  blas_.reset();
  blasLt_.reset();
  workspaces_.reset();
}

int32_t CudaMatmuls::eager(const MatmulCall &c, CUstream stream, uint32_t programStream, bool *replayed) {
  *replayed = false;
  MatmulCall m = c;
  if (int32_t st = giveWorkspace(m, programStream)) return st;
  if (!replays_)
    replays_ = std::make_unique<MatmulReplays>(
        d_, [this](const MatmulCall &mm, CUstream s) { return call(mm, s); }, driverError_);
  return replays_->issue(m, stream, replayed);
}

int32_t CudaMatmuls::library(const MatmulCall &c, CUstream stream, uint32_t programStream) {
  MatmulCall m = c;
  if (int32_t st = giveWorkspace(m, programStream)) return st;
  return call(m, stream);
}

int32_t CudaMatmuls::giveWorkspace(MatmulCall &m, uint32_t programStream) {
  if (!workspaces_) workspaces_ = std::make_unique<MatmulWorkspaces>(d_, ccMajor_, ccMinor_);
  return workspaces_->give(m, programStream, ordinal_);
}

int32_t CudaMatmuls::call(const MatmulCall &m, CUstream stream) {
  if (m.flags & HJ_MM_BIAS) {
    if (!blasLt_) blasLt_ = std::make_unique<CublasLt>();
    return blasLt_->matmul(m, stream, ordinal_);
  }
  if (!blas_) blas_ = std::make_unique<CublasGemm>();
  return blas_->matmul(m, stream, ordinal_);
}

}  // namespace hj

#endif  // HOSTJIT_HAVE_NVRTC
