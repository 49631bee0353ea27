// backend.cpp - what every backend shares: the host-only
// kernel calls refused by other backends, and the host's stream joins.
#include "backend/backend.h"

#include "base/error.h"

namespace hj {

int32_t Backend::registerHostKernel(const char *, hj_host_kernel_fn) {
  return fail(HJ_ERR_INVALID_ARGUMENT, "host kernels can only be registered with the host backend");
}

int32_t Backend::loadHostLibrary(const char *) {
  return fail(HJ_ERR_INVALID_ARGUMENT, "host kernel libraries can only be loaded by the host backend");
}

int32_t Backend::joinNative(void *native, bool after) {
  if (!native) return HJ_OK;  // the host backend's only stream: its work is done when queued
  return fail(HJ_ERR_INVALID_ARGUMENT, "%s: the host backend has no streams; expected NULL, got %p",
              after ? "hj_stream_after_native" : "hj_native_after_stream", native);
}

}  // namespace hj
