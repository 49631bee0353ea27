// eager_path.cpp - the runtime calls of a program, made as they come.
#include "core/eager_path.h"

#include "backend/custom_call.h"
#include "base/error.h"

namespace hj {

void EagerPath::afterError() {
  r_.backend.setStream(0);
  if (r_.comm) r_.comm->closeGroups();  // a failed step inside a send/receive group
}

int32_t EagerPath::syncAfterLaunch(const KernelEntry &k, const char *site) {
  if (r_.backend.synchronize() == HJ_OK) return HJ_OK;
  if (!r_.backend.kernelFault()) return HJ_ERR_BACKEND;  // the synchronisation's (or the communicator's) error is set
  return fail(HJ_ERR_BACKEND,
              "kernel @%s (%s) failed on the device: %s; this context can no longer be used: destroy it, and "
              "the programs and kernel tables made on it, and create a new one",
              k.name.c_str(), *site ? site : "no site given", r_.backend.fault().c_str());
}

int32_t EagerPath::setStream(uint32_t s) {
  if (int32_t st = r_.backend.checkFault()) return st;
  if (int32_t st = r_.events.make(s, r_.injector)) return st;
  r_.backend.setStream(s);
  return HJ_OK;
}

int32_t EagerPath::recordUse(void *ptr) {
  Block *b = r_.buffers.find(ptr);
  if (!b) return fail(HJ_ERR_INVALID_ARGUMENT, "hj_record_use: %p is not a live buffer of this context", ptr);
  r_.buffers.markUsed(b, stream());
  return HJ_OK;
}

int32_t EagerPath::event(uint32_t event, bool wait) {
  if (int32_t st = r_.backend.checkFault()) return st;
  if (int32_t st = r_.injector.check("%s of event %u on stream %u", wait ? "wait for" : "record", event, stream()))
    return st;
  if (wait) {
    if (int32_t st = r_.events.wait(event)) return st;
    ++r_.stats.event_waits;
  } else {
    if (int32_t st = r_.events.record(event)) return st;
    ++r_.stats.event_records;
  }
  return HJ_OK;
}

int32_t EagerPath::streamSync() {
  if (int32_t st = r_.backend.checkFault()) return st;
  if (int32_t st = r_.injector.check("synchronisation of stream %u", stream())) return st;
  return r_.backend.synchronizeStream();
}

int32_t EagerPath::collective(const CollectiveCall &c) {
  Comm &comm = *r_.comm;
  if (int32_t st = r_.backend.checkFault()) return st;
  if (int32_t st = r_.injector.check("rank %d: %s", comm.rank(), c.what->c_str())) return st;
  int32_t st = r_.backend.onDevice([&](void *native) {
    return comm.run(c.kind, c.src, c.dst, c.count, c.dtype, c.op, c.peer, native, false, *c.what);
  });
  if (st) return st;
  if (r_.settings.sync)
    if (int32_t s2 = r_.backend.synchronize()) return s2;
  if (c.kind >= HJ_COLL_GROUP_BEGIN) return HJ_OK;
  ++r_.stats.collectives;
  r_.stats.collective_bytes += c.bytes;
  r_.buffers.noteCollective(c.kind, c.src, c.dst, c.recordBytes, c.dtype, c.op, c.peer, stream());
  return HJ_OK;
}

int32_t EagerPath::matmul(const MatmulCall &c) {
  if (int32_t st = r_.backend.checkFault()) return st;
  if (int32_t st = r_.injector.check("matmul (%s)", c.site)) return st;
  bool replayed = false;
  if (int32_t st = r_.backend.matmul(c, &replayed)) return st;
  if (r_.settings.sync)
    if (int32_t s2 = r_.backend.synchronize()) return s2;
  ++r_.stats.library_calls;
  if (replayed) ++r_.stats.library_replays;
  r_.buffers.noteMatmul(c, stream());
  return HJ_OK;
}

}  // namespace hj

namespace hj {

int32_t EagerPath::customCall(const CustomCall &c) {
  const KernelEntry &k = c.table->kernels[c.callee];
  if (int32_t st = r_.backend.checkFault()) return st;
  if (int32_t st = r_.injector.check("custom call @%s (%s)", k.name.c_str(), c.site)) return st;
  // One pointer captured: the std::function holds it without allocating.
  struct Call {
    const KernelEntry &k;
    const CustomCall &c;
    Backend &backend;
  } call{k, c, r_.backend};
  int32_t st = r_.backend.onDevice([p = &call](void *stream) {
    return invokeCustomCall(p->k, p->c.params, p->backend.kind(), p->backend.deviceId(), stream, p->c.site);
  });
  if (st) return st;
  if (r_.settings.sync)
    if (int32_t s2 = r_.backend.synchronize()) return s2;
  ++r_.stats.library_calls;
  r_.buffers.noteLaunch(k, c.callee, nullptr, c.params, stream());
  return HJ_OK;
}

}  // namespace hj
