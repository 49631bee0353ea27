// observed_path.cpp - each runtime call of a profiled context as a span.
#include "profile/observed_path.h"

#include "backend/backend.h"
#include "comm/comm.h"
#include "profile/nvtx.h"

namespace hj {

template <class F>
int32_t ObservedPath::observe(SpanKind kind, const char *name, const char *site, bool device, F &&f,
                              uint64_t bytes, const int64_t *dims) {
  if (settings_.nvtx) nvtx::push(name, site);
  int32_t st;
  if (p_) {
    Profiler::Open o = p_->begin(kind, name, site, in_.stream());
    o.span.bytes = bytes;
    if (dims)
      for (int i = 0; i < 7; ++i) o.span.dims[i] = static_cast<uint32_t>(dims[i]);
    if (device) p_->deviceBegin(o);
    st = f();
    if (device) p_->deviceEnd(o);
    p_->end(o, st != HJ_OK);
  } else {
    st = f();
  }
  if (settings_.nvtx) nvtx::pop();
  return st;
}

int32_t ObservedPath::alloc(const AllocCall &c, void **out) {
  // A zero_init buffer may be zeroed (or, with HOSTJIT_FILL_NAN, any buffer
  // filled) on the stream: that work is timed as the allocation's.
  bool device = settings_.fillNan || ((c.flags & HJ_ALLOC_ZERO_INIT) && !fromZeroedArena(c.flags, settings_));
  int32_t st = observe(SpanKind::Alloc, c.name, "", device, [&] { return in_.alloc(c, out); }, c.bytes);
  if (st == HJ_OK && p_) p_->named(*out, c.name);
  return st;
}

int32_t ObservedPath::free(void *ptr, bool onError) {
  return observe(SpanKind::Free, p_ ? p_->nameOf(ptr) : "", "", false, [&] { return in_.free(ptr, onError); });
}

int32_t ObservedPath::launch(const LaunchCall &c) {
  const KernelEntry &k = c.table->kernels[c.kernel];
  return observe(SpanKind::Launch, k.name.c_str(), c.site, true, [&] { return in_.launch(c); }, 0, c.dims);
}

int32_t ObservedPath::setStream(uint32_t stream) {
  return observe(SpanKind::Stream, "set_stream", "", false, [&] { return in_.setStream(stream); }, stream);
}

int32_t ObservedPath::event(uint32_t event, bool wait) {
  return observe(SpanKind::Event, wait ? "wait" : "record", "", false, [&] { return in_.event(event, wait); },
                 event);
}

int32_t ObservedPath::streamSync() {
  return observe(SpanKind::Sync, "stream_sync", "", false, [&] { return in_.streamSync(); });
}

int32_t ObservedPath::collective(const CollectiveCall &c) {
  return observe(SpanKind::Collective, collectiveName(c.kind), c.site, true,
                 [&] { return in_.collective(c); }, c.bytes);
}

int32_t ObservedPath::matmul(const MatmulCall &c) {
  return observe(SpanKind::Matmul, "matmul", c.site, true, [&] { return in_.matmul(c); });
}

int32_t ObservedPath::customCall(const CustomCall &c) {
  const KernelEntry &k = c.table->kernels[c.callee];
  return observe(SpanKind::Custom, k.name.c_str(), c.site, true, [&] { return in_.customCall(c); });
}

}  // namespace hj
