// cuda_driver.h - the CUDA driver API, loaded with dlopen once per process
// (cuda_driver.def lists what is used), and the two things every CUDA call
// of the backend needs: the device's retained context and its modules, and
// a context made current for one call.
#pragma once

#ifdef HOSTJIT_HAVE_NVRTC

#include <cuda.h>  // types, enums and prototypes only: libcuda is never linked

#include <cstdint>
#include <string>
#include <unordered_map>

#include "hostjit/runtime.h"

namespace hj {

// The driver functions of cuda_driver.def, resolved once per process.
struct Driver {
#define HJ_CUDA_FN(sym) decltype(&::sym) sym = nullptr;
#define HJ_CUDA_OPT(sym) HJ_CUDA_FN(sym)
#include "cuda/cuda_driver.def"
#undef HJ_CUDA_OPT
#undef HJ_CUDA_FN
  int32_t status = HJ_OK;
  std::string error;  // why the driver cannot be used
};

// "CUDA_ERROR_X (description)".
std::string describe(const Driver &d, CUresult r);

// The process's driver (status says whether it can be used, error why not).
const Driver &driver();

inline CUdeviceptr dptr(const void *p) { return static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(p)); }

// What a kernel table keeps alive after the backend is gone: the retain of
// the device's primary context and the modules loaded in it.
struct CudaModules {
  const Driver *d = nullptr;
  CUdevice device = 0;
  CUcontext ctx = nullptr;  // retained primary context; null until retained
  std::unordered_map<std::string, CUmodule> modules;  // image key -> module

  CudaModules(const CudaModules &) = delete;
  CudaModules &operator=(const CudaModules &) = delete;
  CudaModules(const Driver &drv, CUdevice dev) : d(&drv), device(dev) {}
  ~CudaModules() {
    if (!ctx) return;
    CUcontext prev = nullptr;
    if (d->cuCtxGetCurrent(&prev) != CUDA_SUCCESS) prev = nullptr;
    if (prev != ctx) d->cuCtxSetCurrent(ctx);
    for (auto &entry : modules)
      if (entry.second) d->cuModuleUnload(entry.second);
    if (prev != ctx) d->cuCtxSetCurrent(prev);  // leave the thread as it was
    d->cuDevicePrimaryCtxRelease_v2(device);
  }
};

// Makes a context current for one backend call. When the caller had another
// context current (an application using CUDA itself, maybe on another
// device), it is made current again at the end; when none was, ours stays,
// so later calls find it current and switch nothing.
class CurrentContext {
 public:
  CurrentContext(const Driver &d, CUcontext ctx) : d_(d) {
    if (d.cuCtxGetCurrent(&prev_) != CUDA_SUCCESS) prev_ = nullptr;
    if (prev_ == ctx) return;
    result_ = d.cuCtxSetCurrent(ctx);
    restore_ = result_ == CUDA_SUCCESS && prev_ != nullptr;
  }
  ~CurrentContext() {
    if (restore_) d_.cuCtxSetCurrent(prev_);
  }
  CurrentContext(const CurrentContext &) = delete;
  CurrentContext &operator=(const CurrentContext &) = delete;
  CUresult result() const { return result_; }

 private:
  const Driver &d_;
  CUcontext prev_ = nullptr;
  CUresult result_ = CUDA_SUCCESS;
  bool restore_ = false;
};

}  // namespace hj

#endif  // HOSTJIT_HAVE_NVRTC
