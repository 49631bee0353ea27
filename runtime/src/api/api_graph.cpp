// api_graph.cpp - the graph-mode entry points.
#include "core/context.h"

#include "base/error.h"

extern "C" {

int32_t hj_graph_call(hj_context *ctx, const void *key, uint64_t key_bytes, void *const *inputs, uint32_t num_inputs,
                      int32_t fast, const hj_graph_value *values, uint32_t num_values, void **out_data,
                      uint32_t num_outputs, int64_t *out_dims, uint32_t num_dims, int32_t *done) {
  return hj::guarded([&]() -> int32_t {
    if (int32_t st = hj::checkContext(ctx, "hj_graph_call")) return st;
    if (!done) return hj::fail(HJ_ERR_INVALID_ARGUMENT, "hj_graph_call: done is NULL");
    try {
      return ctx->graphs.call(key, key_bytes, inputs, num_inputs, fast != 0, values, num_values, out_data,
                              num_outputs, out_dims, num_dims, done);
    } catch (...) {
      ctx->graphs.abandon();
      throw;
    }
  });
}

int32_t hj_graph_reserve(hj_context *ctx, const void *key, uint64_t key_bytes, void *const *inputs,
                         uint32_t num_inputs, void **out_data, uint32_t num_outputs, int64_t *out_dims,
                         uint32_t num_dims, int32_t *done) {
  return hj::guarded([&]() -> int32_t {
    if (int32_t st = hj::checkContext(ctx, "hj_graph_reserve")) return st;
    if (!done) return hj::fail(HJ_ERR_INVALID_ARGUMENT, "hj_graph_reserve: done is NULL");
    try {
      return ctx->graphs.call(key, key_bytes, inputs, num_inputs, false, nullptr, 0, out_data, num_outputs, out_dims,
                              num_dims, done, /*reserve=*/true);
    } catch (...) {
      ctx->graphs.abandon();
      throw;
    }
  });
}

int32_t hj_graph_end(hj_context *ctx, int32_t status, void **out_data, int64_t *out_dims, int32_t *again) {
  return hj::guarded([&]() -> int32_t {
    if (int32_t st = hj::checkContext(ctx, "hj_graph_end")) return st;
    if (!again) return hj::fail(HJ_ERR_INVALID_ARGUMENT, "hj_graph_end: again is NULL");
    try {
      return ctx->graphs.end(status, out_data, out_dims, again);
    } catch (...) {
      *again = 0;
      ctx->graphs.abandon();
      throw;
    }
  });
}

const char *hj_graph_reason(const hj_context *ctx) {
  return hj::checkContext(ctx, "hj_graph_reason") == HJ_OK ? ctx->graphs.reason().c_str() : "";
}

const char *hj_graph_outcome(const hj_context *ctx) {
  if (hj::checkContext(ctx, "hj_graph_outcome") != HJ_OK) return "";
  const char *text = "";
  hj::guarded([&] {
    text = ctx->graphs.outcome().c_str();
    return HJ_OK;
  });
  return text;
}

int32_t hj_graph_plan_size(const hj_context *ctx, uint64_t *count, uint64_t *blockBytes, uint64_t *zeroedOffset) {
  return hj::guarded([&]() -> int32_t {
    if (int32_t st = hj::checkContext(ctx, "hj_graph_plan_size")) return st;
    const hj::GraphEntry *e = ctx->graphs.lastPlanned();
    if (!e)
      return hj::fail(HJ_ERR_NOT_FOUND, "hj_graph_plan_size: the last graph-mode call has no memory plan (none was "
                                        "made, or it ran eagerly)");
    if (count) *count = e->allocs.size();
    if (blockBytes) *blockBytes = e->shape->blockBytes;
    if (zeroedOffset) *zeroedOffset = e->shape->zeroedOffset;
    return HJ_OK;
  });
}

int32_t hj_graph_plan_get(const hj_context *ctx, uint64_t index, hj_plan_buffer *out) {
  return hj::guarded([&]() -> int32_t {
    if (int32_t st = hj::checkContext(ctx, "hj_graph_plan_get")) return st;
    const hj::GraphEntry *e = ctx->graphs.lastPlanned();
    if (!e || index >= e->allocs.size() || !out)
      return hj::fail(HJ_ERR_INVALID_ARGUMENT, "hj_graph_plan_get: no buffer %llu in the last call's memory plan",
                      static_cast<unsigned long long>(index));
    const hj::PlannedAlloc &a = e->allocs[index];
    out->name = a.name.c_str();
    out->bytes = a.bytes;
    out->output = a.output;
    out->zeroed = a.zeroed;
    out->offset = a.output ? 0 : e->shape->offset[index];
    out->capacity = a.output ? 0 : e->shape->capacity[index];
    out->first = a.firstEvent;
    out->last = a.lastEvent == SIZE_MAX ? UINT64_MAX : a.lastEvent;
    out->stream = a.stream;
    return HJ_OK;
  });
}

void hj_graph_clear(hj_context *ctx) {
  hj::guarded([&] {
    if (hj::checkContext(ctx, "hj_graph_clear") != HJ_OK) return HJ_OK;
    ctx->graphs.clear();
    return HJ_OK;
  });
}

void hj_graph_forget(hj_context *ctx, const void *prefix, uint64_t bytes) {
  hj::guarded([&] {
    if (ctx && prefix) ctx->graphs.forget(std::string_view(static_cast<const char *>(prefix), bytes));
    return HJ_OK;
  });
}

int32_t hj_graph_sizes_change(hj_context *ctx, const void *prefix, uint64_t bytes, int32_t on) {
  return hj::guarded([&]() -> int32_t {
    if (int32_t st = hj::checkContext(ctx, "hj_graph_sizes_change")) return st;
    if (!prefix || bytes == 0)
      return hj::fail(HJ_ERR_INVALID_ARGUMENT, "hj_graph_sizes_change: expected a key prefix of at least 1 byte, got %s",
                      prefix ? "0 bytes" : "NULL");
    ctx->graphs.sizesChange(std::string_view(static_cast<const char *>(prefix), bytes), on != 0);
    return HJ_OK;
  });
}

}  // extern "C"
