// api_custom.cpp - custom calls: registering a function, and calling one,
// checked here whatever the backend and mode.
#include "base/error.h"
#include "core/context.h"

using hj::checkContext;
using hj::fail;
using hj::guarded;

extern "C" {

int32_t hj_register_custom_call(hj_context *ctx, const char *name, hj_custom_call_fn fn) {
  return guarded([&] {
    if (int32_t st = checkContext(ctx, "hj_register_custom_call")) return st;
    return ctx->customCalls.add(name, fn);
  });
}

int32_t hj_load_custom_library(hj_context *ctx, const char *path) {
  return guarded([&] {
    if (int32_t st = checkContext(ctx, "hj_load_custom_library")) return st;
    return ctx->customCalls.load(path);
  });
}

int32_t hj_custom_call(hj_context *ctx, const hj_kernel_table *table, uint32_t callee, void **params,
                       const char *site) {
  return guarded([&]() -> int32_t {
    if (int32_t st = checkContext(ctx, "hj_custom_call")) return st;
    if (!table || callee >= table->kernels.size())
      return fail(HJ_ERR_INVALID_ARGUMENT, "hj_custom_call: index %u is not in the kernel table", callee);
    const hj::KernelEntry &k = table->kernels[callee];
    if (!k.custom)
      return fail(HJ_ERR_INVALID_ARGUMENT, "hj_custom_call: @%s is a kernel, not a custom call", k.name.c_str());
    if (table->backend != ctx->backend->kind() || table->device != ctx->backend->deviceId())
      return fail(HJ_ERR_INVALID_ARGUMENT, "call of @%s: the kernel table was made for another backend or device",
                  k.name.c_str());
    for (size_t i = 0; i < k.params.size(); ++i)
      if (!params || !params[i])
        return fail(HJ_ERR_INVALID_ARGUMENT, "call of @%s: params[%zu] is NULL, expected a pointer to argument %zu",
                    k.name.c_str(), i, i);
    hj::CustomCall c;
    c.table = table;
    c.callee = callee;
    c.params = params;
    c.site = site && *site ? site : "no site given";
    return ctx->path->customCall(c);
  });
}

}  // extern "C"
