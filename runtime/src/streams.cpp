// streams.cpp - the stream and event entry points, and deferred frees: a
// buffer that work on other streams used returns to its stream's cache only
// once that work has passed.
#include <cstdio>

#include "calls.h"
#include "error.h"

using hj::Block;
using hj::checkContext;
using hj::fail;
using hj::guarded;
using hj::StreamState;

namespace hj {

namespace {

// A backend event for a deferred free: a spare one, or a new one.
int32_t takeEvent(hj_context *ctx, void **out) {
  StreamState &s = ctx->streams;
  if (!s.spareEvents.empty()) {
    *out = s.spareEvents.back();
    s.spareEvents.pop_back();
    return HJ_OK;
  }
  return ctx->backend->createEvent(out);
}

// Returns a block whose deferral is over to its cache or arena.
void finishDeferred(hj_context *ctx, DeferredFree &d) {
  for (void *e : d.events) ctx->streams.spareEvents.push_back(e);
  d.events.clear();
  d.block->usedOn = 0;
  returnBlock(ctx, d.block);
  d.block = nullptr;
}

}  // namespace

void deferOrReturn(hj_context *ctx, Block *b) {
  StreamState &s = ctx->streams;
  uint64_t others = b->usedOn & ~(uint64_t{1} << b->stream);
  if (!others || b->planned >= 0) {
    returnBlock(ctx, b);
    return;
  }
  // One event per stream that used it, recorded there now: work queued
  // there later cannot use the buffer (it is freed).
  DeferredFree d;
  d.block = b;
  uint32_t was = ctx->backend->currentStream();
  bool ok = true;
  try {
    s.deferred.reserve(s.deferred.size() + 1);
    for (uint32_t i = 0; i < StreamState::kMaxStreams && ok; ++i) {
      if (!(others >> i & 1) || i >= ctx->backend->numStreams()) continue;
      void *e = nullptr;
      if (takeEvent(ctx, &e) != HJ_OK) {
        ok = false;
        break;
      }
      try {
        d.events.push_back(e);
      } catch (...) {
        ctx->backend->destroyEvent(e);
        throw;
      }
      ctx->backend->setStream(i);
      ok = ctx->backend->recordEvent(e) == HJ_OK;
    }
  } catch (...) {
    ok = false;
  }
  ctx->backend->setStream(was);
  if (!ok) {
    // No event to wait for: wait for everything instead, then reuse.
    (void)ctx->backend->synchronize();
    for (void *e : d.events) ctx->backend->destroyEvent(e);
    d.events.clear();
    b->usedOn = 0;
    returnBlock(ctx, b);
    return;
  }
  ++ctx->stats.deferred_frees;
  s.deferred.push_back(std::move(d));
}

void pollDeferred(hj_context *ctx) {
  std::vector<DeferredFree> &list = ctx->streams.deferred;
  size_t keep = 0;
  for (size_t i = 0; i < list.size(); ++i) {
    DeferredFree &d = list[i];
    bool done = true;
    for (void *e : d.events) {
      bool one = false;
      if (ctx->backend->eventDone(e, &one) != HJ_OK) one = false;  // a faulted device: keep it
      done = done && one;
    }
    if (done) {
      finishDeferred(ctx, d);
    } else {
      if (keep != i) list[keep] = std::move(d);  // never onto itself: that would empty its events
      ++keep;
    }
  }
  list.resize(keep);
}

void reclaimDeferred(hj_context *ctx) {
  if (ctx->streams.deferred.empty()) return;
  if (ctx->backend->synchronize() != HJ_OK) return;  // a faulted device: keep them
  pollDeferred(ctx);
}

void releaseStreams(hj_context *ctx) {
  StreamState &s = ctx->streams;
  if (!s.deferred.empty()) (void)ctx->backend->synchronize();
  for (DeferredFree &d : s.deferred) {
    for (void *e : d.events) ctx->backend->destroyEvent(e);
    if (d.block->region) {
      ctx->arenas.release(d.block);
      delete d.block;
    } else {
      ctx->pool.release(d.block);
    }
  }
  s.deferred.clear();
  for (void *e : s.events)
    if (e) ctx->backend->destroyEvent(e);
  for (void *e : s.spareEvents) ctx->backend->destroyEvent(e);
  s.events.clear();
  s.spareEvents.clear();
}

}  // namespace hj

int32_t hj_set_stream(hj_context *ctx, uint32_t stream) {
  return guarded([&]() -> int32_t {
    if (int32_t st = checkContext(ctx, "hj_set_stream")) return st;
    if (stream >= StreamState::kMaxStreams)
      return fail(HJ_ERR_INVALID_ARGUMENT, "hj_set_stream: stream %u, expected 0 to %u", stream,
                  StreamState::kMaxStreams - 1);
    hj::GraphCache::Mode mode = ctx->graphs.mode();
    if (mode == hj::GraphCache::Mode::Trace || mode == hj::GraphCache::Mode::Replay) {
      // Graph mode: the stream orders the graph's nodes; the graph itself
      // runs on stream 0, where its buffers belong.
      if (mode == hj::GraphCache::Mode::Replay && ctx->recording)
        hj::record(ctx, HJ_REC_STREAM, nullptr, "").entry.index = stream;
      return ctx->graphs.setStream(stream);
    }
    if (int32_t st = ctx->backend->checkFault()) return st;
    while (ctx->backend->numStreams() <= stream) {
      if (int32_t st = ctx->injector.check("creation of stream %u", ctx->backend->numStreams())) return st;
      if (int32_t st = ctx->backend->addStream()) return st;
    }
    if (ctx->recording) hj::record(ctx, HJ_REC_STREAM, nullptr, "").entry.index = stream;
    ctx->backend->setStream(stream);
    return HJ_OK;
  });
}

int32_t hj_record_use(hj_context *ctx, void *ptr) {
  return guarded([&]() -> int32_t {
    if (int32_t st = checkContext(ctx, "hj_record_use")) return st;
    // Tracing: the addresses are not buffers. In graph mode every buffer's
    // work is on stream 0 (the graph's), so nothing is deferred.
    if (ctx->graphs.mode() == hj::GraphCache::Mode::Trace) {
      ctx->graphs.traceUse(ptr);
      return HJ_OK;
    }
    Block *b = ctx->live.find(ptr);
    if (!b) return fail(HJ_ERR_INVALID_ARGUMENT, "hj_record_use: %p is not a live buffer of this context", ptr);
    uint32_t s = ctx->backend->currentStream();  // the backend's stream: 0 all through graph mode
    if (ctx->recording) hj::record(ctx, HJ_REC_USE, b, b->name);
    if (s != b->stream) b->usedOn |= uint64_t{1} << s;
    return HJ_OK;
  });
}

namespace {

int32_t eventCall(hj_context *ctx, uint32_t event, bool wait) {
  const char *fn = wait ? "hj_event_wait" : "hj_event_record";
  if (int32_t st = checkContext(ctx, fn)) return st;
  if (event >= StreamState::kMaxEvents)
    return fail(HJ_ERR_INVALID_ARGUMENT, "%s: event %u, expected 0 to %u", fn, event, StreamState::kMaxEvents - 1);
  hj::GraphCache::Mode mode = ctx->graphs.mode();
  bool graph = mode == hj::GraphCache::Mode::Trace || mode == hj::GraphCache::Mode::Replay;
  if (mode == hj::GraphCache::Mode::Trace) return ctx->graphs.event(event, wait);
  if (int32_t st = ctx->backend->checkFault()) return st;
  if (int32_t st = ctx->injector.check("%s of event %u on stream %u", wait ? "wait for" : "record",
                                       event, hj::programStream(ctx)))
    return st;
  if (graph) {  // an edge of the graph; no event reaches the device
    if (int32_t st = ctx->graphs.event(event, wait)) return st;
    if (ctx->recording)
      hj::record(ctx, wait ? HJ_REC_EVENT_WAIT : HJ_REC_EVENT_RECORD, nullptr, "").entry.index = event;
    return HJ_OK;
  }
  StreamState &s = ctx->streams;
  if (s.events.size() <= event) s.events.resize(event + 1, nullptr);
  if (wait) {
    if (s.events[event])
      if (int32_t st = ctx->backend->waitEvent(s.events[event])) return st;
    ++ctx->stats.event_waits;
  } else {
    if (!s.events[event])
      if (int32_t st = ctx->backend->createEvent(&s.events[event])) return st;
    if (int32_t st = ctx->backend->recordEvent(s.events[event])) return st;
    ++ctx->stats.event_records;
  }
  if (ctx->recording) hj::record(ctx, wait ? HJ_REC_EVENT_WAIT : HJ_REC_EVENT_RECORD, nullptr, "").entry.index = event;
  return HJ_OK;
}

}  // namespace

int32_t hj_event_record(hj_context *ctx, uint32_t event) {
  return guarded([&] { return eventCall(ctx, event, false); });
}

int32_t hj_event_wait(hj_context *ctx, uint32_t event) {
  return guarded([&] { return eventCall(ctx, event, true); });
}

int32_t hj_stream_sync(hj_context *ctx) {
  return guarded([&]() -> int32_t {
    if (int32_t st = checkContext(ctx, "hj_stream_sync")) return st;
    hj::GraphCache::Mode mode = ctx->graphs.mode();
    if (mode == hj::GraphCache::Mode::Trace) return ctx->graphs.streamSync();
    if (int32_t st = ctx->backend->checkFault()) return st;
    if (int32_t st = ctx->injector.check("synchronisation of stream %u", hj::programStream(ctx))) return st;
    if (mode == hj::GraphCache::Mode::Replay) {  // later nodes of every stream follow this stream's
      if (int32_t st = ctx->graphs.streamSync()) return st;
      if (ctx->recording) hj::record(ctx, HJ_REC_SYNC, nullptr, "");
      return HJ_OK;
    }
    if (int32_t st = ctx->backend->synchronizeStream()) return st;
    if (ctx->recording) hj::record(ctx, HJ_REC_SYNC, nullptr, "");
    return HJ_OK;
  });
}
