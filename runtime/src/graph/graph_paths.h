// graph_paths.h - the call paths of graph mode: Trace runs the program
// without touching the device and its recorder learns the program's
// allocations, their lifetimes and its operations; Replay runs it against
// the plan, its matcher comparing each call with the traced one and
// collecting the work for the graph. Both place operations in one
// CallOrder, which the graph cache resets per call.
#pragma once

#include <string>

#include "base/call_path.h"
#include "graph/call_order.h"
#include "graph/graph_room.h"
#include "graph/replay_matcher.h"
#include "graph/signature_cache.h"
#include "graph/trace_recorder.h"

namespace hj {

// Trace: nothing reaches the device, nothing fails on purpose (injection
// counts the calls that will reach it), nothing is counted or recorded.
class TracePath final : public CallPath {
 public:
  TracePath(const GraphRoom &r, SignatureCache &signatures, CallOrder &order)
      : r_(r), order_(order), recorder_(signatures, r.settings, order) {}
  TraceRecorder &recorder() { return recorder_; }

  uint32_t stream() const override { return order_.stream(); }
  int32_t alloc(const AllocCall &c, void **out) override { return recorder_.alloc(c, out); }
  int32_t free(void *ptr, bool onError) override { return recorder_.free(ptr, onError); }
  void afterError() override;
  int32_t launch(const LaunchCall &c) override { return recorder_.launch(c.table, c.kernel, c.dims, c.params); }
  int32_t setStream(uint32_t stream) override { return recorder_.setStream(stream); }
  int32_t recordUse(void *ptr) override {
    recorder_.use(ptr);
    return HJ_OK;
  }
  int32_t event(uint32_t event, bool wait) override { return order_.event(event, wait); }
  int32_t streamSync() override { return order_.streamSync(); }
  int32_t collective(const CollectiveCall &c) override { return recorder_.collective(c); }
  int32_t matmul(const MatmulCall &c) override { return recorder_.matmul(c); }
  int32_t customCall(const CustomCall &c) override { return recorder_.customCall(c); }
  bool dropsGraphsOnAbort() const override { return true; }

 private:
  GraphRoom r_;
  CallOrder &order_;
  TraceRecorder recorder_;
};

// Replay: the calls are made against the plan and counted and recorded as
// eager calls are; launches, memsets and collectives become the graph's
// nodes, launched when the program ends.
class ReplayPath final : public CallPath {
 public:
  // reason: where a mismatch's reason goes (ReplayMatcher).
  ReplayPath(const GraphRoom &r, CallOrder &order, std::string &reason)
      : r_(r), order_(order), matcher_(r.buffers, order, r.record, r.stats, reason) {}
  ReplayMatcher &matcher() { return matcher_; }

  uint32_t stream() const override { return order_.stream(); }
  int32_t alloc(const AllocCall &c, void **out) override;
  int32_t free(void *ptr, bool onError) override { return matcher_.free(ptr, onError); }
  void afterError() override;
  int32_t launch(const LaunchCall &c) override;
  // The stream orders the graph's nodes; the graph itself runs on stream
  // 0, where its buffers belong.
  int32_t setStream(uint32_t stream) override { return order_.setStream(stream); }
  int32_t recordUse(void *ptr) override;
  int32_t event(uint32_t event, bool wait) override;
  int32_t streamSync() override;
  int32_t collective(const CollectiveCall &c) override;
  int32_t matmul(const MatmulCall &c) override;
  int32_t customCall(const CustomCall &c) override;
  bool rerunsOnFailure() const override { return matcher_.mismatched(); }
  bool dropsGraphsOnAbort() const override { return true; }

 private:
  GraphRoom r_;
  CallOrder &order_;
  ReplayMatcher matcher_;
};

}  // namespace hj
