// matmul_workspace.cpp - a context's per-stream matmul workspaces, sized as
// PyTorch sizes its cuBLAS and cuBLASLt workspaces.
#include "cuda/matmul_workspace.h"

#ifdef HOSTJIT_HAVE_NVRTC

#include <cstdlib>

#include "base/error.h"
#include "cuda/workspace_sizes.h"

namespace hj {

MatmulWorkspaces::MatmulWorkspaces(const Driver &d, int ccMajor, int ccMinor) : d_(d) {
  WorkspaceSizes w = workspaceSizes(std::getenv("CUBLAS_WORKSPACE_CONFIG"), std::getenv("CUBLASLT_WORKSPACE_SIZE"),
                                    std::getenv("HOSTJIT_MATMUL_WORKSPACE"), ccMajor, ccMinor);
  cublas_ = w.cublas;
  lt_ = w.lt;
  error_ = w.error;
}

MatmulWorkspaces::~MatmulWorkspaces() {
  for (CUdeviceptr p : buffers_)
    if (p) d_.cuMemFree_v2(p);
}

int32_t MatmulWorkspaces::give(MatmulCall &c, uint32_t stream, int32_t ordinal) {
  if (c.workspace) return HJ_OK;
  if (!error_.empty()) return fail(HJ_ERR_INVALID_ARGUMENT, "%s: %s", c.site, error_.c_str());
  if (cublas_ == 0) return HJ_OK;
  if (stream >= buffers_.size()) buffers_.resize(stream + 1, 0);
  if (!buffers_[stream]) {
    // Outside the context's pool, as PyTorch's is outside its caching
    // allocator's blocks: it lives as long as the context.
    if (CUresult r = d_.cuMemAlloc_v2(&buffers_[stream], cublas_)) {
      buffers_[stream] = 0;
      return fail(r == CUDA_ERROR_OUT_OF_MEMORY ? HJ_ERR_OUT_OF_MEMORY : HJ_ERR_BACKEND,
                  "%s: the context's matmul workspace of %llu bytes for stream %u could not be allocated on CUDA "
                  "device %d (HOSTJIT_MATMUL_WORKSPACE sets its size; 0: none): %s",
                  c.site, static_cast<unsigned long long>(cublas_), stream, ordinal, describe(d_, r).c_str());
    }
  }
  c.workspace = reinterpret_cast<void *>(static_cast<uintptr_t>(buffers_[stream]));
  c.workspaceBytes = (c.flags & HJ_MM_BIAS) ? lt_ : cublas_;
  return HJ_OK;
}

}  // namespace hj

#endif  // HOSTJIT_HAVE_NVRTC
