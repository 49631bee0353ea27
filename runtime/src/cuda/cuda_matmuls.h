// cuda_matmuls.h - a CUDA context's matrix multiplies: cuBLAS for a plain
// product and cuBLASLt for one with a bias (the calls PyTorch makes for
// mm, bmm and addmm), each loaded on first use; the context's per-stream
// workspaces; and the eager calls replayed from their captured graphs.
#pragma once

#ifdef HOSTJIT_HAVE_NVRTC

#include <cuda.h>

#include <functional>
#include <memory>

#include "base/call_path.h"
#include "cuda/cuda_driver.h"

namespace hj {

class CublasLt;
class CublasGemm;
class MatmulWorkspaces;
class MatmulReplays;

class CudaMatmuls {
 public:
  // driverError: the backend's error for a failed driver call (a sticky one
  // faults it).
  CudaMatmuls(const Driver &d, int32_t ordinal, int ccMajor, int ccMinor,
              std::function<int32_t(const char *, CUresult)> driverError);
  ~CudaMatmuls();  // releases graphs, handles and workspaces: call with the context current
  CudaMatmuls(const CudaMatmuls &) = delete;
  CudaMatmuls &operator=(const CudaMatmuls &) = delete;

  // An eager matmul on `stream`, the program's stream `programStream`: the
  // library's call, or the replay of its capture (*replayed says which).
  int32_t eager(const MatmulCall &c, CUstream stream, uint32_t programStream, bool *replayed);
  // The library's call of c on `stream` (graph mode captures it), with the
  // workspace PyTorch gives each unless the call brings its own.
  int32_t library(const MatmulCall &c, CUstream stream, uint32_t programStream);

 private:
  int32_t giveWorkspace(MatmulCall &m, uint32_t programStream);
  // A bias goes through cuBLASLt's epilogue, anything else through cuBLAS's
  // gemm.
  int32_t call(const MatmulCall &m, CUstream stream);

  const Driver &d_;
  int32_t ordinal_;
  int ccMajor_, ccMinor_;
  std::function<int32_t(const char *, CUresult)> driverError_;
  std::unique_ptr<CublasLt> blasLt_;              // made by the first matmul with a bias
  std::unique_ptr<CublasGemm> blas_;              // made by the first matmul without one
  std::unique_ptr<MatmulWorkspaces> workspaces_;  // made by the first matmul
  std::unique_ptr<MatmulReplays> replays_;        // made by the first eager matmul
};

}  // namespace hj

#endif  // HOSTJIT_HAVE_NVRTC
