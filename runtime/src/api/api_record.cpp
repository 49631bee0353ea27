// api_record.cpp - the call record's entry points.
#include "base/error.h"
#include "core/context.h"

extern "C" {

void hj_record_enable(hj_context *ctx, int32_t on) {
  ctx->record.enable(on != 0);
  if (on) ctx->buffers.restartIds();
  // Between calls the context's path is the outside one; it changes with it.
  bool between = ctx->path == ctx->outside;
  ctx->outside = on ? &ctx->recorded
                    : ctx->observed ? static_cast<hj::CallPath *>(ctx->observed.get()) : &ctx->eager;
  if (between) ctx->path = ctx->outside;
}

uint64_t hj_record_size(const hj_context *ctx) { return ctx->record.size(); }

int32_t hj_record_get(const hj_context *ctx, uint64_t index, hj_record_entry *out) {
  if (int32_t st = hj::checkContext(ctx, "hj_record_get")) return st;
  return ctx->record.get(index, out);
}

int64_t hj_record_format(const hj_context *ctx, uint64_t index, char *buf, uint64_t cap) {
  try {
    return ctx->record.format(index, buf, cap);
  } catch (...) {
    hj::fail(HJ_ERR_OUT_OF_MEMORY, "hj_record_format: host memory exhausted");
    return -1;
  }
}

}  // extern "C"
