// eager_path.h - the eager call path: each runtime call of a program happens
// as it is made (allocations per the contract, launches on the backend,
// streams, events, collectives), counted and recorded.
#pragma once

#include <memory>

#include "backend/backend.h"
#include "base/call_path.h"
#include "base/fault_injection.h"
#include "base/settings.h"
#include "comm/comm.h"
#include "memory/buffers.h"
#include "record/call_record.h"
#include "streams/stream_events.h"

namespace hj {

// What the eager path works with: the context's rooms.
struct EagerRoom {
  Backend &backend;
  Buffers &buffers;
  CallRecord &record;
  StreamEvents &events;
  hj_stats &stats;
  FaultInjector &injector;
  const Settings &settings;
  std::unique_ptr<Comm> &comm;
};

// The entry points call the eager path directly when it is the context's
// (core/context.h, eagerPath()), so its hottest calls, defined here, inline
// into them: a call through the interface and one more function boundary
// per runtime call cost the host backend ~15% of an alloc and free.
class EagerPath final : public CallPath {
 public:
  explicit EagerPath(EagerRoom room) : r_(room) {}
  uint32_t stream() const override { return r_.backend.currentStream(); }
  __attribute__((always_inline)) int32_t alloc(const AllocCall &c, void **out) override {
    if (int32_t st = r_.backend.checkFault()) return st;
    if (int32_t st = r_.injector.check("hj_alloc of %%%s", c.name)) return st;
    BufferRequest req;
    req.bytes = c.bytes;
    req.flags = c.flags;
    req.dtype = c.dtype;
    req.name = c.name;
    req.recordStream = r_.record.on() ? stream() : 0;
    Block *b = nullptr;
    if (int32_t st = r_.buffers.allocate(req, &b)) return st;
    *out = b->ptr;
    return HJ_OK;
  }
  __attribute__((always_inline)) int32_t free(void *ptr, bool onError) override {
    return r_.buffers.free(ptr, onError, r_.record.on() ? stream() : 0);
  }
  void afterError() override;
  __attribute__((always_inline)) int32_t launch(const LaunchCall &c) override {
    const KernelEntry &k = c.table->kernels[c.kernel];
    if (int32_t st = r_.backend.checkFault()) return st;
    if (int32_t st = r_.injector.check("launch of @%s (%s)", k.name.c_str(), *c.site ? c.site : "no site given"))
      return st;
    r_.buffers.noteLaunch(k, c.kernel, c.dims, c.params, r_.record.on() ? stream() : 0);
    const int64_t *d = c.dims;
    hj_dim3 grid{uint32_t(d[0]), uint32_t(d[1]), uint32_t(d[2])};
    hj_dim3 block{uint32_t(d[3]), uint32_t(d[4]), uint32_t(d[5])};
    if (int32_t st = r_.backend.launch(k, grid, block, uint32_t(d[6]), c.params)) return st;
    ++r_.stats.launches;
    if (r_.settings.sync) return syncAfterLaunch(k, c.site);
    return HJ_OK;
  }
  int32_t setStream(uint32_t stream) override;
  int32_t recordUse(void *ptr) override;
  int32_t event(uint32_t event, bool wait) override;
  int32_t streamSync() override;
  int32_t collective(const CollectiveCall &c) override;
  int32_t matmul(const MatmulCall &c) override;
  int32_t customCall(const CustomCall &c) override;

 private:
  // HOSTJIT_SYNC: waits for the kernel and names it when it faulted.
  int32_t syncAfterLaunch(const KernelEntry &k, const char *site);
  EagerRoom r_;
};

}  // namespace hj
