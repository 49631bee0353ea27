// matmul_workspace.h - the workspaces a CUDA context gives the matmuls that
// bring none of their own: one per program stream, as PyTorch keeps one per
// cuBLAS handle and stream, of the sizes PyTorch gives (so that cuBLAS and
// cuBLASLt choose PyTorch's algorithms), allocated when a stream first
// multiplies and kept for the context's life.
#pragma once

#ifdef HOSTJIT_HAVE_NVRTC

#include <cstdint>
#include <string>
#include <vector>

#include "base/call_path.h"
#include "cuda/cuda_driver.h"

namespace hj {

class MatmulWorkspaces {
 public:
  // The sizes, read once from the environment: workspaceSizes() of
  // CUBLAS_WORKSPACE_CONFIG, CUBLASLT_WORKSPACE_SIZE and
  // HOSTJIT_MATMUL_WORKSPACE (workspace_sizes.h).
  MatmulWorkspaces(const Driver &d, int ccMajor, int ccMinor);
  ~MatmulWorkspaces();  // frees them: call with the context current
  MatmulWorkspaces(const MatmulWorkspaces &) = delete;
  MatmulWorkspaces &operator=(const MatmulWorkspaces &) = delete;
  // A call without a workspace gets `stream`'s (allocated on first use);
  // one with its own keeps it. Errors: HJ_ERR_INVALID_ARGUMENT for a
  // HOSTJIT_MATMUL_WORKSPACE that is no number of bytes;
  // HJ_ERR_OUT_OF_MEMORY when the workspace cannot be allocated (naming the
  // statement).
  int32_t give(MatmulCall &c, uint32_t stream, int32_t ordinal);

 private:
  const Driver &d_;
  uint64_t cublas_ = 0, lt_ = 0;
  std::string error_;  // a bad setting, reported by every call
  std::vector<CUdeviceptr> buffers_;  // per program stream; 0 until used
};

}  // namespace hj

#endif  // HOSTJIT_HAVE_NVRTC
