// custom_call.h - calling a custom call's function with its arguments as
// hj_custom_args, on a stream: what the eager path, graph capture and the
// host's graphs share.
#pragma once

#include <cstdint>

#include "backend/backend.h"

namespace hj {

// Calls k.custom with params (packed as a launch's, one pointer per declared
// parameter) on `stream` (CUDA: a CUstream, its device current; host:
// NULL). A non-zero return fails with HJ_ERR_BACKEND and a message naming
// the custom call, the site and what the function said.
int32_t invokeCustomCall(const KernelEntry &k, void *const *params, int32_t backend, int32_t device, void *stream,
                         const char *site);

}  // namespace hj
