// api_context.cpp - the entry points of a context: making and destroying
// it, its device, stats, caches, copies and synchronisation.
#include <cstring>

#include "base/error.h"
#include "core/context.h"

using hj::checkContext;
using hj::fail;
using hj::guarded;

extern "C" {

void hj_options_init(hj_options *o) {
  if (!o) return;
  std::memset(o, 0, sizeof *o);
  o->backend = HJ_BACKEND_HOST;
  o->reuse_zeroed_memory = -1;
  o->check_zeroed = -1;
  o->fill_nan = -1;
  o->sync = -1;
  o->fail_at = -1;
  o->profile = -1;
}

int32_t hj_context_create(const hj_options *options, hj_context **out) {
  return guarded([&]() -> int32_t {
    if (!out) return fail(HJ_ERR_INVALID_ARGUMENT, "hj_context_create: out is NULL");
    *out = nullptr;
    hj_options o;
    hj_options_init(&o);
    if (options) o = *options;
    std::unique_ptr<hj::Backend> backend;
    switch (o.backend) {
      case HJ_BACKEND_HOST: backend = hj::makeHostBackend(); break;
      case HJ_BACKEND_CUDA:
        if (int32_t st = hj::makeCudaBackend(o.device, o.stream, backend)) return st;
        break;
      case HJ_BACKEND_AUTO:
        if (hj::makeCudaBackend(o.device, o.stream, backend) != HJ_OK) backend = hj::makeHostBackend();
        hj_clear_error();
        break;
      default: return fail(HJ_ERR_INVALID_ARGUMENT, "hj_context_create: unknown backend %d", o.backend);
    }
    *out = new hj_context(std::move(backend), o, hj::settingsOf(o));
    return HJ_OK;
  });
}

void hj_context_destroy(hj_context *ctx) {
  guarded([&] {
    delete ctx;
    return HJ_OK;
  });
}

int32_t hj_context_backend(const hj_context *ctx) { return ctx->backend->kind(); }

void hj_context_device(const hj_context *ctx, int32_t *type, int32_t *id) {
  if (type) *type = ctx->backend->dlDeviceType();
  if (id) *id = ctx->backend->deviceId();
}

void *hj_context_native_stream(const hj_context *ctx) { return ctx->backend->nativeStream(); }

void hj_get_stats(const hj_context *ctx, hj_stats *out) { *out = ctx->stats; }

void hj_inject_failure(hj_context *ctx, uint64_t n) { ctx->injector.arm(n); }

void hj_reset_stats(hj_context *ctx) {
  hj_stats &s = ctx->stats;
  s.allocs = s.frees = s.memsets = s.fills = s.launches = s.backend_allocs = s.backend_frees = s.arena_growths =
      s.pool_hits = s.fallible_ops = 0;
  s.graph_builds = s.graph_replays = s.graph_fast = s.graph_updates = s.graph_fallbacks = s.graph_evictions = 0;
  s.event_records = s.event_waits = s.deferred_frees = s.collectives = s.collective_bytes = s.library_calls =
      s.library_replays = 0;
  s.peak_bytes = s.live_bytes;
}

int32_t hj_empty_cache(hj_context *ctx) {
  return guarded([&]() -> int32_t {
    if (int32_t st = checkContext(ctx, "hj_empty_cache")) return st;
    ctx->buffers.emptyCache();
    return HJ_OK;
  });
}

int32_t hj_synchronize(hj_context *ctx) {
  return guarded([&] {
    if (int32_t st = checkContext(ctx, "hj_synchronize")) return st;
    return ctx->backend->synchronize();
  });
}

int32_t hj_buffer_alloc(hj_context *ctx, uint64_t bytes, void **out) {
  return guarded([&] {
    if (int32_t st = checkContext(ctx, "hj_buffer_alloc")) return st;
    if (int32_t st = ctx->backend->checkFault()) return st;
    return ctx->backend->allocate(bytes, out);
  });
}

void hj_buffer_free(hj_context *ctx, void *ptr) {
  guarded([&] {
    // A bad context with a buffer is a caller's mistake it cannot be told
    // of (no status): the buffer is left, and the last error says why.
    if (ptr && checkContext(ctx, "hj_buffer_free") == HJ_OK) ctx->backend->release(ptr);
    return HJ_OK;
  });
}

int32_t hj_copy_to_host(hj_context *ctx, void *dst, const void *src, uint64_t bytes) {
  return guarded([&]() -> int32_t {
    if (int32_t st = checkContext(ctx, "hj_copy_to_host")) return st;
    if (int32_t st = ctx->backend->synchronize()) return st;
    return ctx->backend->copyToHost(dst, src, bytes);
  });
}

int32_t hj_copy_from_host(hj_context *ctx, void *dst, const void *src, uint64_t bytes) {
  return guarded([&] {
    if (int32_t st = checkContext(ctx, "hj_copy_from_host")) return st;
    if (int32_t st = ctx->backend->checkFault()) return st;
    return ctx->backend->copyFromHost(dst, src, bytes);
  });
}

int32_t hj_arena_check_zero(hj_context *ctx, int32_t *isZero) {
  return guarded([&]() -> int32_t {
    if (int32_t st = checkContext(ctx, "hj_arena_check_zero")) return st;
    if (!isZero) return fail(HJ_ERR_INVALID_ARGUMENT, "hj_arena_check_zero: isZero is NULL");
    bool z = true;
    int32_t st = ctx->buffers.checkArenasZero(&z);
    if (st == HJ_OK && z) st = ctx->graphs.checkZero(&z);
    *isZero = z ? 1 : 0;
    return st;
  });
}

}  // extern "C"
