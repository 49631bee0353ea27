// stream_events.h - a context's streams and the events of its programs: the
// backend's streams made on first use, and program event i (hj_event_record,
// hj_event_wait) made when first recorded.
#pragma once

#include <cstdint>
#include <vector>

#include "backend/backend.h"
#include "base/fault_injection.h"

namespace hj {

class StreamEvents {
 public:
  explicit StreamEvents(Backend &backend) : backend_(backend) {}
  ~StreamEvents();
  StreamEvents(const StreamEvents &) = delete;
  StreamEvents &operator=(const StreamEvents &) = delete;

  // Makes the backend's streams up to `stream` (each creation a fallible
  // operation); the caller then makes it the current one.
  int32_t make(uint32_t stream, FaultInjector &injector);
  // Records event `event` on the current stream, making it first.
  int32_t record(uint32_t event);
  // The current stream waits for the event's last record (none: no wait).
  int32_t wait(uint32_t event);

 private:
  Backend &backend_;
  std::vector<void *> events_;  // NULL until first recorded
};

}  // namespace hj
