// graph_cache.h - graph mode: memory plans and executable graphs per shape
// of work, and the signatures bound to them, kept per context
// (docs/graph-mode.md).
//
// A call in graph mode (hj_graph_call, hj_graph_end) goes through these modes
// of the context: Trace runs a new signature's program once without
// touching the device (fake buffer addresses), learning its allocations,
// their lifetimes, its operations and their argument values; the signature
// is then fitted into the memory plan of its shape of work (intermediates
// in slots of one block, grown when they do not fit), bound to one of the
// shape's executable graphs (or given a new one), its fake addresses
// resolved, and launched, the program not run again. Replay runs the
// program against the plan instead (a recorded call, HOSTJIT_CHECK_ZEROED,
// an argument the key does not fix): intermediates get their planned
// addresses, outputs come from the pool, launches and memsets are collected
// (not issued) and compared with the graph's. A fast replay skips the
// program: it allocates the outputs, patches the nodes whose arguments are
// input or output addresses, sets the nodes that differ from the graph's,
// and launches. Eager runs the program as without graph mode (a fallback,
// with a reason).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "graph/call_order.h"
#include "graph/call_outcome.h"
#include "graph/graph_entry.h"
#include "graph/graph_executor.h"
#include "graph/graph_paths.h"
#include "graph/graph_room.h"
#include "graph/memory_plans.h"
#include "graph/signature_cache.h"
#include "graph/worth_policy.h"
#include "record/recorded_path.h"

namespace hj {

// The graph-mode state of a context.
class GraphCache {
 public:
  explicit GraphCache(GraphRoom room);
  ~GraphCache();
  GraphCache(const GraphCache &) = delete;
  GraphCache &operator=(const GraphCache &) = delete;

  const std::string &reason() const { return reason_; }
  // hj_graph_outcome: the last call's way, made into words when asked.
  const std::string &outcome() const;
  void clear();
  void forget(std::string_view prefix);
  // hj_graph_sizes_change: the programs whose keys start with `prefix`
  // change sizes on most calls (on) or no longer; their entries carry it
  // (GraphEntry::sizesChange).
  void sizesChange(std::string_view prefix, bool on);
  // Drops the graphs that hold collectives: before the communicator is
  // aborted or destroyed, since NCCL's abort waits until the graphs its work
  // was captured into are gone.
  void dropCommunicating();
  // After an exception inside a graph-mode call: frees what the call
  // allocated, drops its entry and leaves the mode off.
  void abandon();
  // The entry of the last call when it has a memory plan (hj_graph_plan_*), else NULL.
  const GraphEntry *lastPlanned() const {
    const GraphEntry *e = signatures_.last();
    return e && e->shape && e->eagerReason.empty() ? e : nullptr;
  }
  // Checks that the zeroed part of every cached memory plan is zero.
  int32_t checkZero(bool *isZero);

  // reserve (hj_graph_reserve): a signature not cached is traced and its
  // shape's memory plan sized for it; nothing runs on the device.
  int32_t call(const void *key, uint64_t keyBytes, void *const *inputs, uint32_t numInputs, bool fast,
               const hj_graph_value *values, uint32_t numValues, void **outData, uint32_t numOutputs,
               int64_t *outDims, uint32_t numDims, int32_t *done, bool reserve = false);
  int32_t end(int32_t status, void **outData, int64_t *outDims, int32_t *again);
  // The end of a reservation's trace: no outputs.
  int32_t reserved(void **outData);

 private:
  enum class Mode : uint8_t { Off, Trace, Replay, Eager };

  // A new signature's entry. Unless it is reserved or came back after
  // leaving probation, it starts on probation, whose oldest entry is
  // evicted when it holds Settings::graphProbation. When the cache is full
  // (Settings::graphCache), the oldest entry on probation is evicted first,
  // else the one used longest ago. One that came back while the cache had
  // room (nothing evicted for it) recurs: it gets its own graph (bindPlan).
  GraphEntry *insert(std::string_view key, bool reserve);
  // Whether `key` starts with a prefix given to hj_graph_sizes_change.
  bool changesSizes(std::string_view key) const;
  // Evicts `e`, remembering a key that leaves probation.
  void evict(GraphEntry *e);
  // An entry taken out of the cache: its graph and plan let go of, its
  // operations and allocations kept for new traces.
  void erase(GraphEntry *e);
  // Lets go of the entry's executable graph and plan (each dropped with its
  // last signature).
  void unbind(GraphEntry &e);
  // The traced signature's shape of work: its plan found (grown when the
  // signature does not fit) or made, and an executable graph of it chosen.
  int32_t bindPlan(GraphEntry &e);
  void startReplay();
  // A new signature of a program for which graph mode does not pay: true,
  // with reason_ saying why, when it runs eagerly.
  bool notWorthIt(const void *key, uint64_t keyBytes, bool miss);

  // Switches the mode and the context's call path with it.
  void enter(Mode mode);
  // The stream records name: the context's call path's (in Trace and
  // Replay the one the graph's nodes are being placed on, else the
  // backend's).
  uint32_t programStream() const { return r_.path->stream(); }

  GraphRoom r_;
  Mode mode_ = Mode::Off;
  SignatureCache signatures_;
  std::string reason_;  // hj_graph_reason: why the last call ran as it did (a replay's mismatch included)
  // Where the call's operations go, shared by its trace and its replay.
  CallOrder order_;
  TracePath trace_;    // and its recorder
  ReplayPath replay_;  // and its matcher
  RecordedPath recordedReplay_;  // replay_ while the record is on
  GraphEntry *cur_ = nullptr;
  CallOutcome outcome_;  // the last call's way (hj_graph_outcome)
  MemoryPlans plans_;  // per shape of work
  WorthPolicy worth_;  // per program: whether graph mode pays for its new signatures
  GraphCall call_;  // the call in progress
  GraphExecutor exec_;  // bind, patch, update, launch
  std::vector<std::string> sizesChange_;  // key prefixes of programs whose sizes change on most calls
};

}  // namespace hj
