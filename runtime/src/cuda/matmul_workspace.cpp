// matmul_workspace.cpp - a context's per-stream matmul workspaces, sized as
// PyTorch sizes its cuBLAS and cuBLASLt workspaces.
#include "cuda/matmul_workspace.h"

#ifdef HOSTJIT_HAVE_NVRTC

#include <algorithm>
#include <cstdlib>
#include <regex>

#include "base/error.h"

namespace hj {

namespace {

// A decimal number of `unit`s, or false.
bool parseCount(const char *text, uint64_t unit, uint64_t &out) {
  if (!text || !*text) return false;
  char *end = nullptr;
  unsigned long long v = std::strtoull(text, &end, 10);
  if (*end || text[0] == '-') return false;
  out = uint64_t(v) * unit;
  return true;
}

}  // namespace

MatmulWorkspaces::MatmulWorkspaces(const Driver &d, int ccMajor, int ccMinor) : d_(d) {
  cublas_ = ccMajor == 9 && ccMinor == 0 ? uint64_t{4096} * 8 * 1024 : (uint64_t{4096} * 2 + 16 * 8) * 1024;
  if (const char *config = std::getenv("CUBLAS_WORKSPACE_CONFIG"); config && *config) {
    // PyTorch's reading: the sum of SIZE KiB x COUNT over ":SIZE:COUNT".
    std::string s(config);
    std::regex pair(":([0-9]+):([0-9]+)");
    uint64_t total = 0;
    bool any = false;
    for (std::sregex_iterator it(s.begin(), s.end(), pair), end; it != end; ++it, any = true)
      total += std::stoull((*it)[1]) * 1024 * std::stoull((*it)[2]);
    if (any) cublas_ = total;
  }
  uint64_t lt = 1024 * 1024;
  if (const char *v = std::getenv("CUBLASLT_WORKSPACE_SIZE"); v && *v && !parseCount(v, 1024, lt))
    lt = 1024 * 1024;  // PyTorch warns and keeps its default
  if (const char *v = std::getenv("HOSTJIT_MATMUL_WORKSPACE"); v && *v && !parseCount(v, 1, cublas_))
    error_ = std::string("HOSTJIT_MATMUL_WORKSPACE=") + v + ": expected a number of bytes (0: none)";
  lt_ = std::min(lt, cublas_);
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
