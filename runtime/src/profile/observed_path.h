// observed_path.h - the call path of a profiled context (or one a tool
// watches through NVTX): each runtime call goes to the eager path,
// wrapped in a span (host time, and device time of the work it queues) and
// an NVTX range. Contexts that are neither keep the eager path itself, so
// observing costs them nothing.
#pragma once

#include "base/call_path.h"
#include "base/settings.h"
#include "profile/profiler.h"

namespace hj {

class ObservedPath final : public CallPath {
 public:
  // profiler: NULL when only NVTX ranges are wanted; settings: the
  // context's, which outlive the path (NVTX ranges wanted; whether an
  // allocation queues a fill or a memset, as the buffers decide it).
  ObservedPath(CallPath &inner, Profiler *profiler, const Settings &settings)
      : in_(inner), p_(profiler), settings_(settings) {}
  uint32_t stream() const override { return in_.stream(); }
  int32_t alloc(const AllocCall &c, void **out) override;
  int32_t free(void *ptr, bool onError) override;
  void afterError() override { in_.afterError(); }
  int32_t launch(const LaunchCall &c) override;
  int32_t setStream(uint32_t stream) override;
  int32_t recordUse(void *ptr) override { return in_.recordUse(ptr); }
  int32_t event(uint32_t event, bool wait) override;
  int32_t streamSync() override;
  int32_t collective(const CollectiveCall &c) override;
  int32_t matmul(const MatmulCall &c) override;
  int32_t customCall(const CustomCall &c) override;
  bool dropsGraphsOnAbort() const override { return in_.dropsGraphsOnAbort(); }

 private:
  // Runs f as a span of `kind`, its device work timed when `device`.
  template <class F>
  int32_t observe(SpanKind kind, const char *name, const char *site, bool device, F &&f, uint64_t bytes = 0,
                  const int64_t *dims = nullptr);
  CallPath &in_;
  Profiler *p_;
  const Settings &settings_;
};

}  // namespace hj
