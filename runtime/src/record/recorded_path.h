// recorded_path.h - the call path of a context whose calls are recorded
// (hj_record_enable): each call goes to the path it wraps (eager, observed,
// or graph mode's replay), and the stream switches, event records and
// waits and stream syncs that succeed are written to the record here, once
// for every path. Allocations, frees, launches and the other calls that
// name buffers are recorded by the buffers, which know their ids.
#pragma once

#include "base/call_path.h"
#include "record/call_record.h"

namespace hj {

class RecordedPath final : public CallPath {
 public:
  RecordedPath(CallPath &inner, CallRecord &record) : in_(inner), record_(record) {}
  uint32_t stream() const override { return in_.stream(); }
  int32_t alloc(const AllocCall &c, void **out) override { return in_.alloc(c, out); }
  int32_t free(void *ptr, bool onError) override { return in_.free(ptr, onError); }
  void afterError() override { in_.afterError(); }
  int32_t launch(const LaunchCall &c) override { return in_.launch(c); }
  int32_t setStream(uint32_t stream) override;
  int32_t recordUse(void *ptr) override { return in_.recordUse(ptr); }
  int32_t event(uint32_t event, bool wait) override;
  int32_t streamSync() override;
  int32_t collective(const CollectiveCall &c) override { return in_.collective(c); }
  int32_t matmul(const MatmulCall &c) override { return in_.matmul(c); }
  int32_t customCall(const CustomCall &c) override { return in_.customCall(c); }
  bool rerunsOnFailure() const override { return in_.rerunsOnFailure(); }
  bool dropsGraphsOnAbort() const override { return in_.dropsGraphsOnAbort(); }

 private:
  CallPath &in_;
  CallRecord &record_;
};

}  // namespace hj
