// workspace_sizes.h - the matmul workspace sizes PyTorch gives cuBLAS and
// cuBLASLt, read from PyTorch's own settings as PyTorch reads them, which
// a CUDA context's matmul workspaces take (matmul_workspace.h).
#pragma once

#include <cstdint>
#include <string>

namespace hj {

struct WorkspaceSizes {
  uint64_t cublas = 0;  // bytes per stream, for cuBLAS (0: none)
  uint64_t lt = 0;      // of those, what a matmul with a bias gives cuBLASLt
  std::string error;    // a setting refused: what it was and what was expected
};

// The settings' texts (NULL or empty: unset): cublasConfig is
// CUBLAS_WORKSPACE_CONFIG, whose ":SIZE:COUNT" pairs (KiB) add up (without
// one: 32 MiB on compute capability 9.0, 4096 KiB x 2 + 16 KiB x 8
// elsewhere); ltKib is CUBLASLT_WORKSPACE_SIZE (KiB, default 1024; not a
// number: the default, as PyTorch warns and keeps it), at most cuBLAS's;
// hostjitBytes is HOSTJIT_MATMUL_WORKSPACE, bytes that replace cuBLAS's (not
// a number: `error`).
WorkspaceSizes workspaceSizes(const char *cublasConfig, const char *ltKib, const char *hostjitBytes, int ccMajor,
                              int ccMinor);

}  // namespace hj
