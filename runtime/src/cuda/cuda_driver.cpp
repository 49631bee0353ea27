// cuda_driver.cpp - the driver loaded with dlopen, once per process.
#include "cuda/cuda_driver.h"

#ifdef HOSTJIT_HAVE_NVRTC

#include <cstdio>

#include "base/shared_library.h"

namespace hj {

std::string describe(const Driver &d, CUresult r) {
  const char *name = nullptr, *text = nullptr;
  if (!d.cuGetErrorName || d.cuGetErrorName(r, &name) != CUDA_SUCCESS) name = nullptr;
  if (!d.cuGetErrorString || d.cuGetErrorString(r, &text) != CUDA_SUCCESS) text = nullptr;
  char buf[256];
  if (name)
    std::snprintf(buf, sizeof buf, "%s (%s)", name, text ? text : "no description");
  else
    std::snprintf(buf, sizeof buf, "CUDA error %d", static_cast<int>(r));
  return buf;
}

namespace {

Driver loadDriver() {
  Driver d;
  OpenedLibrary opened = openLibrary({"libcuda.so.1"});
  void *lib = opened.handle;
  if (!lib) {
    std::string why = opened.firstError;
    const std::string prefix = "libcuda.so.1: ";  // dlerror names the file itself; say it once
    if (why.compare(0, prefix.size(), prefix) == 0) why.erase(0, prefix.size());
    d.status = HJ_ERR_NO_DRIVER;
    d.error = "no CUDA driver found (libcuda.so.1: " + why + ")";
    return d;
  }
  // The library stays loaded for the life of the process.
#define HJ_CUDA_FN(sym)                                                                              \
  d.sym = librarySymbol<decltype(&::sym)>(lib, #sym);                                                \
  if (!d.sym) {                                                                                      \
    d.status = HJ_ERR_NO_DRIVER;                                                                     \
    d.error = "the CUDA driver (libcuda.so.1) does not export " #sym ": the driver is too old";      \
    return d;                                                                                        \
  }
#define HJ_CUDA_OPT(sym) d.sym = librarySymbol<decltype(&::sym)>(lib, #sym);
#include "cuda/cuda_driver.def"
#undef HJ_CUDA_OPT
#undef HJ_CUDA_FN
  CUresult r = d.cuInit(0);
  if (r != CUDA_SUCCESS) {
    d.status = HJ_ERR_NO_DRIVER;
    d.error = std::string(r == CUDA_ERROR_NO_DEVICE ? "no CUDA device found" : "no usable CUDA driver found") +
              ": cuInit failed with " + describe(d, r);
  }
  return d;
}

}  // namespace

const Driver &driver() {
  static const Driver d = loadDriver();  // thread-safe, once per process
  return d;
}

}  // namespace hj

#endif  // HOSTJIT_HAVE_NVRTC
