// recorded_path.cpp - stream, event and sync entries of the call record,
// written after the wrapped path made the call.
#include "record/recorded_path.h"

namespace hj {

int32_t RecordedPath::setStream(uint32_t stream) {
  uint32_t from = in_.stream();  // the entry is made on the stream left
  if (int32_t st = in_.setStream(stream)) return st;
  record_.add(HJ_REC_STREAM, from, nullptr, "").entry.index = stream;
  return HJ_OK;
}

int32_t RecordedPath::event(uint32_t event, bool wait) {
  if (int32_t st = in_.event(event, wait)) return st;
  record_.add(wait ? HJ_REC_EVENT_WAIT : HJ_REC_EVENT_RECORD, in_.stream(), nullptr, "").entry.index = event;
  return HJ_OK;
}

int32_t RecordedPath::streamSync() {
  if (int32_t st = in_.streamSync()) return st;
  record_.add(HJ_REC_SYNC, in_.stream(), nullptr, "");
  return HJ_OK;
}

}  // namespace hj
