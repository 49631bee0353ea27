// api_profile.cpp - the entry points of profiles, traces and named ranges.
#include "base/error.h"
#include "core/context.h"
#include "profile/nvtx.h"

using hj::checkContext;
using hj::fail;
using hj::guarded;

namespace {

int32_t profiling(const hj_context *ctx, const char *fn) {
  if (int32_t st = checkContext(ctx, fn)) return st;
  if (!ctx->profiler)
    return fail(HJ_ERR_INVALID_ARGUMENT,
                "%s: the context does not profile (create it with hj_options.profile = 1, or set "
                "HOSTJIT_PROFILE=1)",
                fn);
  return HJ_OK;
}

}  // namespace

extern "C" {

// Ranges are a no-op unless the context is observed; a pointer that is no
// live context is ignored (the best effort of checkContext, without a message).
void hj_range_push(hj_context *ctx, const char *name) {
  if (!ctx || ctx->magic != hj_context::kLive || !ctx->observed) return;
  guarded([&] {
    if (ctx->settings.nvtx) hj::nvtx::push(name ? name : "");
    if (ctx->profiler) ctx->profiler->push(name ? name : "");
    return HJ_OK;
  });
}

void hj_range_pop(hj_context *ctx) {
  if (!ctx || ctx->magic != hj_context::kLive || !ctx->observed) return;
  guarded([&] {
    if (ctx->profiler) ctx->profiler->pop();
    if (ctx->settings.nvtx) hj::nvtx::pop();
    return HJ_OK;
  });
}

int32_t hj_profile_count(hj_context *ctx, uint64_t *rows) {
  return guarded([&]() -> int32_t {
    if (int32_t st = profiling(ctx, "hj_profile_count")) return st;
    if (!rows) return fail(HJ_ERR_INVALID_ARGUMENT, "hj_profile_count: rows is NULL");
    *rows = 0;
    if (int32_t st = ctx->profiler->makeTable()) return st;
    *rows = ctx->profiler->table().size();
    return HJ_OK;
  });
}

int32_t hj_profile_get(const hj_context *ctx, uint64_t index, hj_profile_row *out) {
  return guarded([&]() -> int32_t {
    if (int32_t st = profiling(ctx, "hj_profile_get")) return st;
    if (!out) return fail(HJ_ERR_INVALID_ARGUMENT, "hj_profile_get: out is NULL");
    const auto &t = ctx->profiler->table();
    if (index >= t.size())
      return fail(HJ_ERR_INVALID_ARGUMENT, "hj_profile_get: row %llu of %zu (call hj_profile_count first)",
                  static_cast<unsigned long long>(index), t.size());
    *out = t[index];
    return HJ_OK;
  });
}

int32_t hj_profile_clear(hj_context *ctx) {
  return guarded([&]() -> int32_t {
    if (int32_t st = profiling(ctx, "hj_profile_clear")) return st;
    return ctx->profiler->clear();
  });
}

int32_t hj_trace_write(hj_context *ctx, const char *path) {
  return guarded([&]() -> int32_t {
    if (int32_t st = profiling(ctx, "hj_trace_write")) return st;
    if (!path || !*path) return fail(HJ_ERR_INVALID_ARGUMENT, "hj_trace_write: path is empty");
    return ctx->profiler->writeTrace(path, ctx->backend->kind() == HJ_BACKEND_CUDA ? "cuda" : "host");
  });
}

}  // extern "C"
