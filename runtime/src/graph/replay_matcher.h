// replay_matcher.h - graph mode's Replay: a signature's program runs
// against its memory plan, and each runtime call is compared with the one
// traced (another call is a mismatch: the key did not cover what the
// program depends on) and its values set into the operation, those that
// changed listed dirty. Intermediates get their planned addresses, outputs
// come from the pool. The replay path owns it (graph_paths.h).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "base/call_path.h"
#include "graph/call_order.h"
#include "graph/graph_entry.h"
#include "memory/buffers.h"
#include "record/call_record.h"

namespace hj {

class ReplayMatcher {
 public:
  // A mismatch's reason is written to `reason` at once (the graph cache's,
  // which hj_graph_reason reads).
  ReplayMatcher(Buffers &buffers, CallOrder &order, CallRecord &record, hj_stats &stats, std::string &reason)
      : buffers_(buffers), order_(order), record_(record), stats_(stats), reason_(reason) {}

  // A replay of `e` starts: the call order reset, nothing allocated or
  // compared yet, no mismatch; the record's and the counters' marks taken.
  // The reason is left as it is (the call's, so far).
  void start(GraphEntry &e);
  // A call differs from the traced one: fails with `reason`, which says so.
  int32_t mismatch(const char *fmt, ...) __attribute__((format(printf, 2, 3)));
  bool mismatched() const { return mismatched_; }
  const std::string &reason() const { return reason_; }
  // The program returned: a mismatch unless it made every traced call.
  void checkComplete();
  // After a mismatch: what the replay recorded and counted forgotten, the
  // mismatch cleared (the call runs again eagerly); the reason stays.
  void undo();
  // The call was abandoned (an exception): no mismatch.
  void clearMismatch() { mismatched_ = false; }

  // The outputs this call allocated (allocation index, address).
  const std::vector<std::pair<uint32_t, void *>> &outputs() const { return outputs_; }
  // Frees them (their last use on `stream`), or forgets them.
  void freeOutputs(uint32_t stream);
  void clearOutputs() { outputs_.clear(); }

  int32_t alloc(const AllocCall &c, void **out);
  // A planned buffer's last kernel goes to its plan (HOSTJIT_CHECK_ZEROED).
  int32_t free(void *ptr, bool onError);
  // kind: Kernel, or Custom for a custom call (dims then zero).
  int32_t launch(const hj_kernel_table *table, uint32_t kernel, const int64_t *dims, void **params,
                 GraphOpKind kind = GraphOpKind::Kernel);
  int32_t customCall(const CustomCall &c);
  int32_t collective(const CollectiveCall &c);
  int32_t matmul(const MatmulCall &c);

 private:
  // Checks that operation `index` is on the stream and after the
  // operations it was traced on and after, and places it.
  int32_t place(uint32_t index);

  Buffers &buffers_;
  CallOrder &order_;
  CallRecord &record_;
  hj_stats &stats_;
  GraphEntry *e_ = nullptr;
  size_t allocAt_ = 0, opAt_ = 0;  // the next allocation and operation to compare
  uint32_t partAt_ = 0;            // the next part of the collective node in progress
  std::vector<std::pair<uint32_t, void *>> outputs_;
  bool mismatched_ = false;
  std::string &reason_;
  size_t recordMark_ = 0;
  hj_stats statsMark_{};
};

}  // namespace hj
