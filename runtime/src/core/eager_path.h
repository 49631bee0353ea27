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

class EagerPath final : public CallPath {
 public:
  explicit EagerPath(EagerRoom room) : r_(room) {}
  uint32_t stream() const override { return r_.backend.currentStream(); }
  int32_t alloc(const AllocCall &c, void **out) override;
  int32_t free(void *ptr, bool onError) override;
  void afterError() override;
  int32_t launch(const LaunchCall &c) override;
  int32_t setStream(uint32_t stream) override;
  int32_t recordUse(void *ptr) override;
  int32_t event(uint32_t event, bool wait) override;
  int32_t streamSync() override;
  int32_t collective(const CollectiveCall &c) override;

 private:
  EagerRoom r_;
};

}  // namespace hj
