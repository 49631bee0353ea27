// custom_call.cpp - a custom call's arguments unpacked from launch params
// into hj_custom_args, the call, and its error.
#include "backend/custom_call.h"

#include <cstring>

#include "base/error.h"

namespace hj {

int32_t invokeCustomCall(const KernelEntry &k, void *const *params, int32_t backend, int32_t device, void *stream,
                         const char *site) {
  hj_custom_arg args[64];
  if (k.params.size() > sizeof args / sizeof args[0])
    return fail(HJ_ERR_INVALID_ARGUMENT, "custom call @%s (%s): %zu parameters; at most 64 are supported",
                k.name.c_str(), site, k.params.size());
  for (size_t i = 0; i < k.params.size(); ++i) {
    int32_t kind = k.params[i];
    hj_custom_arg &a = args[i];
    a = hj_custom_arg{};
    const char *p = static_cast<const char *>(params[i]);
    if (kind == HJ_PARAM_PTR || (kind & 0xff) == HJ_PARAM_TENSOR) {
      a.kind = kind & 0xff;
      a.dtype = i < k.dtypes.size() ? k.dtypes[i] : uint32_t(HJ_DTYPE_COUNT);
      std::memcpy(&a.data, p, sizeof a.data);
      if (a.kind == HJ_PARAM_TENSOR) {
        a.rank = hj_param_rank(kind);
        a.sizes = reinterpret_cast<const int64_t *>(p + sizeof(void *));
        a.strides = a.sizes + a.rank;
      }
    } else {
      a.kind = kind;
      std::memcpy(&a.value, p, paramBytes(kind));
    }
  }
  hj_custom_call_args call{};
  call.name = k.name.c_str();
  call.site = site;
  call.backend = backend;
  call.device = device;
  call.stream = stream;
  call.num_args = static_cast<uint32_t>(k.params.size());
  call.args = args;
  char message[1024] = "";
  int32_t r = k.custom(&call, message, sizeof message);
  if (r == 0) return HJ_OK;
  message[sizeof message - 1] = '\0';
  return fail(HJ_ERR_BACKEND, "custom call @%s (%s) failed (it returned %d): %s", k.name.c_str(), site, r,
              *message ? message : "it gave no message");
}

}  // namespace hj
