// trace_recorder.h - graph mode's Trace: a new signature's program runs
// once without touching the device, and its runtime calls are written into
// the signature's entry: its allocations (fake addresses), their lifetimes
// and streams, and its operations with their argument values, streams and
// dependencies. The trace path owns it (graph_paths.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/call_path.h"
#include "base/settings.h"
#include "graph/call_order.h"
#include "graph/graph_entry.h"
#include "graph/signature_cache.h"

namespace hj {

class TraceRecorder {
 public:
  // Operations and allocations come from `signatures` (reused when it kept
  // some); `order` is shared with the replay.
  TraceRecorder(SignatureCache &signatures, const Settings &settings, CallOrder &order)
      : signatures_(signatures), settings_(settings), order_(order) {}

  // A trace of `e` starts (its entry is empty): the last trace's counts
  // reserved, the call order reset.
  void start(GraphEntry &e);
  // The trace ended (or was abandoned): nothing of it is live any more.
  void finish();
  // Why the program cannot be a graph (a custom call's), "" when it can.
  const std::string &uncapturable() const { return uncapturable_; }
  // After a trace that may become a graph: the lifetimes made final
  // (buffers used on other streams live to the end when some use is of no
  // traced buffer), what a fast replay counts, and the counts the next
  // trace reserves.
  void settle(GraphEntry &e);

  int32_t alloc(const AllocCall &c, void **out);
  // The end of a traced buffer's life.
  int32_t free(void *ptr, bool onError);
  // kind: Kernel, or Custom for a custom call (dims then zero).
  int32_t launch(const hj_kernel_table *table, uint32_t kernel, const int64_t *dims, void **params,
                 GraphOpKind kind = GraphOpKind::Kernel);
  // A custom call that is not capturable makes the signature run eagerly.
  int32_t customCall(const CustomCall &c);
  int32_t collective(const CollectiveCall &c);
  int32_t matmul(const MatmulCall &c);
  int32_t setStream(uint32_t stream);
  // hj_record_use of `ptr`: its buffer is used on another stream.
  void use(const void *ptr);

 private:
  // The stream and dependencies of operation `index`, just traced.
  int32_t place(uint32_t index);

  SignatureCache &signatures_;
  const Settings &settings_;
  CallOrder &order_;
  GraphEntry *e_ = nullptr;
  size_t event_ = 0;  // allocations, frees and operations so far: the lifetimes' clock
  uint64_t liveBytes_ = 0;
  std::vector<char> live_;  // per allocation, not yet freed
  std::string uncapturable_;
  size_t lastOps_ = 0, lastAllocs_ = 0;
};

}  // namespace hj
