// stream_events.cpp - streams made on first use, and program events.
#include "streams/stream_events.h"

namespace hj {

StreamEvents::~StreamEvents() {
  for (void *e : events_)
    if (e) backend_.destroyEvent(e);
}

int32_t StreamEvents::make(uint32_t stream, FaultInjector &injector) {
  while (backend_.numStreams() <= stream) {
    if (int32_t st = injector.check("creation of stream %u", backend_.numStreams())) return st;
    if (int32_t st = backend_.addStream()) return st;
  }
  return HJ_OK;
}

int32_t StreamEvents::record(uint32_t event) {
  if (events_.size() <= event) events_.resize(event + 1, nullptr);
  if (!events_[event])
    if (int32_t st = backend_.createEvent(&events_[event])) return st;
  return backend_.recordEvent(events_[event]);
}

int32_t StreamEvents::wait(uint32_t event) {
  if (event < events_.size() && events_[event]) return backend_.waitEvent(events_[event]);
  return HJ_OK;
}

}  // namespace hj
