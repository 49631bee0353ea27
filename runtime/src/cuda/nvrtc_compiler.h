// nvrtc_compiler.h - compiles CUDA kernel sources with NVRTC (loaded at run
// time), with a process-wide in-memory cache and an on-disk cache.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "hostjit/runtime.h"

namespace hj {

// A module image for one device architecture, ready for cuModuleLoadData.
struct CudaImage {
  std::shared_ptr<const std::string> data;  // cubin; PTX only when the device is newer than NVRTC
  std::string key;                          // 32 hex digits: the cache key, also the file name
  bool compiled = false;                    // NVRTC produced it in this call (no cache hit)
};

// Compiles desc.cuda_source for compute capability ccMajor.ccMinor, or finds
// it in the caches. NVRTC gets the include directories, built-in headers and
// extra options of cuda_sources.h. The key covers the source text, every
// file it includes (contents), the NVRTC options (the architecture among
// them) and the NVRTC version; not the entry point, so the kernels of one
// source file share one image. `fresh` skips both caches
// and replaces their entries (used when the driver refused a cached image).
// Errors: HJ_ERR_INVALID_ARGUMENT with NVRTC's log when the source does not
// compile; HJ_ERR_NOT_FOUND when NVRTC cannot be loaded; HJ_ERR_BACKEND else.
int32_t compileCudaKernel(const hj_kernel_desc &desc, int ccMajor, int ccMinor, bool fresh, CudaImage &out);

// The directory NVRTC was loaded from ("" when it cannot be loaded or the
// directory is unknown); the toolkit's other libraries lie beside it.
std::string nvrtcLibraryDirectory();

// The directory of the on-disk cache: $HOSTJIT_CACHE_DIR/cuda, else
// $XDG_CACHE_HOME/hostjit/cuda, else $HOME/.cache/hostjit/cuda, created with
// mode 0700. Empty when HOSTJIT_CACHE=0, when no directory can be named, or
// when the directory is not private to this user (cache_files.h): then the
// reason is kept for hj_cuda_cache_problem() and said once on stderr.
std::string cudaCacheDirectory();

// A 128-bit non-cryptographic hash of `data` as 32 hex digits (two
// independent 64-bit hashes); used for cache keys.
std::string hashHex128(const std::string &data);

}  // namespace hj
