// api_streams.cpp - the stream and event entry points: checked here, then
// made by the context's call path; and the joins with a caller's stream.
#include "base/error.h"
#include "core/context.h"

using hj::checkContext;
using hj::fail;
using hj::guarded;

namespace {

int32_t eventCall(hj_context *ctx, uint32_t event, bool wait) {
  const char *fn = wait ? "hj_event_wait" : "hj_event_record";
  if (int32_t st = checkContext(ctx, fn)) return st;
  if (event >= HJ_MAX_EVENTS)
    return fail(HJ_ERR_INVALID_ARGUMENT, "%s: event %u, expected 0 to %u", fn, event, HJ_MAX_EVENTS - 1);
  return ctx->path->event(event, wait);
}

}  // namespace

extern "C" {

int32_t hj_set_stream(hj_context *ctx, uint32_t stream) {
  return guarded([&]() -> int32_t {
    if (int32_t st = checkContext(ctx, "hj_set_stream")) return st;
    if (stream >= HJ_MAX_STREAMS)
      return fail(HJ_ERR_INVALID_ARGUMENT, "hj_set_stream: stream %u, expected 0 to %u", stream, HJ_MAX_STREAMS - 1);
    return ctx->path->setStream(stream);
  });
}

int32_t hj_record_use(hj_context *ctx, void *ptr) {
  return guarded([&]() -> int32_t {
    if (int32_t st = checkContext(ctx, "hj_record_use")) return st;
    return ctx->path->recordUse(ptr);
  });
}

int32_t hj_event_record(hj_context *ctx, uint32_t event) {
  return guarded([&] { return eventCall(ctx, event, false); });
}

int32_t hj_event_wait(hj_context *ctx, uint32_t event) {
  return guarded([&] { return eventCall(ctx, event, true); });
}

int32_t hj_stream_sync(hj_context *ctx) {
  return guarded([&]() -> int32_t {
    if (int32_t st = checkContext(ctx, "hj_stream_sync")) return st;
    return ctx->path->streamSync();
  });
}

int32_t hj_stream_after_native(hj_context *ctx, void *stream) {
  return guarded([&]() -> int32_t {
    if (int32_t st = checkContext(ctx, "hj_stream_after_native")) return st;
    if (int32_t st = ctx->backend->checkFault()) return st;
    return ctx->backend->joinNative(stream, true);
  });
}

int32_t hj_native_after_stream(hj_context *ctx, void *stream) {
  return guarded([&]() -> int32_t {
    if (int32_t st = checkContext(ctx, "hj_native_after_stream")) return st;
    if (int32_t st = ctx->backend->checkFault()) return st;
    return ctx->backend->joinNative(stream, false);
  });
}

}  // extern "C"
