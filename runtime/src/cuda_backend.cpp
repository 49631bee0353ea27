// cuda_backend.cpp - placeholder until the CUDA backend lands (issue 4).
#include "backend.h"
#include "error.h"

namespace hj {
int32_t makeCudaBackend(int32_t, void *, std::unique_ptr<Backend> &) {
  return fail(HJ_ERR_NO_DRIVER, "no CUDA driver found: this build has no CUDA backend yet");
}
}  // namespace hj
