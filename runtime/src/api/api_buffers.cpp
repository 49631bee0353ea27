// api_buffers.cpp - hj_alloc, hj_free and the error path's frees: checked
// here, then made by the context's call path.
#include "base/error.h"
#include "core/context.h"
#include "hostjit/alloc_flags.h"

using hj::checkContext;
using hj::fail;
using hj::guarded;

extern "C" {

int32_t hj_alloc(hj_context *ctx, const int64_t *sizes, const int64_t *strides, uint32_t rank, uint32_t dtype,
                 uint32_t flags, const char *name, void **out) {
  return guarded([&]() -> int32_t {
    if (!name) name = "?";
    if (int32_t st = checkContext(ctx, "hj_alloc")) return st;
    if (!out) return fail(HJ_ERR_INVALID_ARGUMENT, "hj_alloc of %%%s: out is NULL", name);
    if (rank > 0 && !sizes)
      return fail(HJ_ERR_INVALID_ARGUMENT, "hj_alloc of %%%s: sizes is NULL with rank %u", name, rank);
    if (rank > HJ_MAX_RANK)
      return fail(HJ_ERR_INVALID_ARGUMENT, "hj_alloc of %%%s: rank %u, expected at most %d", name, rank, HJ_MAX_RANK);
    uint32_t esize = hj_dtype_size(dtype);
    if (esize == 0) return fail(HJ_ERR_INVALID_ARGUMENT, "buffer %%%s: unknown dtype %u", name, dtype);
    if (const char *why = hj_alloc_flags_problem(flags))
      return fail(HJ_ERR_INVALID_ARGUMENT, "buffer %%%s: %s", name, why);
    hj::AllocCall c;
    c.sizes = sizes;
    c.strides = strides;
    c.rank = rank;
    c.dtype = dtype;
    c.flags = flags;
    c.name = name;
    if (int32_t st = hj::bufferBytes(sizes, strides, rank, esize, name, &c.bytes)) return st;
    if ((flags & HJ_ALLOC_OUTPUT) && (flags & HJ_ALLOC_RESETS_TO_ZERO))
      return fail(HJ_ERR_INVALID_ARGUMENT, "buffer %%%s: an output cannot be resets_to_zero", name);
    return hj::eagerPath(ctx) ? ctx->eager.alloc(c, out) : ctx->path->alloc(c, out);
  });
}

int32_t hj_free(hj_context *ctx, void *ptr) {
  return guarded([&]() -> int32_t {
    if (int32_t st = checkContext(ctx, "hj_free")) return st;
    return hj::eagerPath(ctx) ? ctx->eager.free(ptr, false) : ctx->path->free(ptr, false);
  });
}

void hj_free_on_error(hj_context *ctx, void *ptr) {
  guarded([&]() -> int32_t { return hj::eagerPath(ctx) ? ctx->eager.free(ptr, true) : ctx->path->free(ptr, true); });
}

void hj_free_all_on_error(hj_context *ctx, void *const *buffers, uint32_t count) {
  for (uint32_t i = count; i-- > 0;)
    if (buffers[i]) hj_free_on_error(ctx, buffers[i]);
  ctx->path->afterError();
}

}  // extern "C"
