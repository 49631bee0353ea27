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
#include <unordered_map>
#include <vector>

#include "backend/backend.h"
#include "base/call_path.h"
#include "graph/call_outcome.h"
#include "graph/graph_entry.h"
#include "graph/memory_plans.h"
#include "graph/op_order.h"
#include "graph/signature_cache.h"
#include "graph/worth_policy.h"
#include "base/fault_injection.h"
#include "base/settings.h"
#include "comm/comm.h"
#include "memory/buffers.h"
#include "profile/profiler.h"
#include "record/call_record.h"
#include "record/recorded_path.h"

namespace hj {

// What graph mode works with: the context's backend, buffers, record,
// counters, fault injector, settings and communicator (which a context may
// get after its graph cache is made), and the context's current call path,
// which graph mode points at its trace and replay paths while a graph-mode
// call runs and gives back to `eager` when it ends.
struct GraphRoom {
  Backend &backend;
  Buffers &buffers;
  CallRecord &record;
  hj_stats &stats;
  FaultInjector &injector;
  const Settings &settings;
  std::unique_ptr<Comm> &comm;
  CallPath *&path;
  CallPath *&outside;   // the path outside graph-mode calls (eager, observed or recorded: core/context.h)
  Profiler *profiler;   // NULL unless the context profiles
};

// The graph-mode state of a context.
class GraphCache {
 public:
  enum class Mode : uint8_t { Off, Trace, Replay, Eager };

  explicit GraphCache(GraphRoom room);
  ~GraphCache();
  GraphCache(const GraphCache &) = delete;
  GraphCache &operator=(const GraphCache &) = delete;

  Mode mode() const { return mode_; }
  // The stream records name: the context's call path's (in Trace and
  // Replay the one the graph's nodes are being placed on, else the
  // backend's).
  uint32_t programStream() const;
  // A replay found the program's calls differ from the traced ones (it
  // fails, and hj_graph_end runs the call eagerly).
  bool mismatched() const { return mismatched_; }
  const std::string &reason() const { return reason_; }
  // hj_graph_outcome: the last call's way, made into words when asked.
  const std::string &outcome() const;
  void clear();
  void forget(std::string_view prefix);
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

  // The runtime calls of a program in Trace and Replay mode (graph_paths.h
  // hands them here, checked as eager calls check them): the trace path
  // calls the trace* functions, the replay path the replay* ones.
  int32_t traceAlloc(const AllocCall &c, void **out);
  int32_t replayAlloc(const AllocCall &c, void **out);
  // Trace: the end of a traced buffer's life.
  int32_t traceFree(void *ptr, bool onError);
  // Replay: a buffer of the program is freed (a planned one keeps its last
  // kernel in the plan, for HOSTJIT_CHECK_ZEROED).
  int32_t replayFree(void *ptr, bool onError);
  // kind: Kernel, or Custom for a custom call (dims then zero).
  int32_t traceLaunch(const hj_kernel_table *table, uint32_t kernel, const int64_t *dims, void **params,
                      GraphNode::Kind kind = GraphNode::Kind::Kernel);
  int32_t replayLaunch(const hj_kernel_table *table, uint32_t kernel, const int64_t *dims, void **params,
                       GraphNode::Kind kind = GraphNode::Kind::Kernel);
  // A custom call: a node captured from its function's stream work on CUDA,
  // like a library call; one that is not capturable makes this signature
  // run eagerly (the trace ends with the reason).
  int32_t traceCustomCall(const CustomCall &c);
  int32_t replayCustomCall(const CustomCall &c);
  // Streams and events become edges between the graph's nodes (the backend's
  // stream is not changed: the graph launches on stream 0). A wait makes the
  // stream's next operation depend on what preceded the event's record; a
  // stream sync makes every stream's next operation depend on that stream's
  // work so far. Inside a send/receive group they fail (a group node holds
  // only its sends and receives).
  uint32_t stream() const { return order_.stream(); }
  // Trace: hj_record_use of `ptr` (its buffer is used on another stream).
  void traceUse(const void *ptr);
  int32_t setStream(uint32_t stream);
  int32_t event(uint32_t event, bool wait);
  int32_t streamSync();
  // A call of hj_collective: a node of its own, or a part of the group node
  // that a GROUP_BEGIN opened, after the previous collective node.
  int32_t traceCollective(const CollectiveCall &c);
  int32_t replayCollective(const CollectiveCall &c);
  // A library call (hj_matmul): a node of its own, captured from the
  // library's calls on CUDA.
  int32_t traceMatmul(const MatmulCall &c);
  int32_t replayMatmul(const MatmulCall &c);

 private:
  // A new signature's entry, the one used longest ago evicted first when
  // the cache is full (Settings::graphCache).
  GraphEntry *insert(std::string_view key);
  // An entry taken out of the cache: its graph and plan let go of, its
  // operations and allocations kept for new traces.
  void erase(GraphEntry *e);
  // Lets go of the entry's executable graph and plan (each dropped with its
  // last signature).
  void unbind(GraphEntry &e);
  int32_t mismatch(const char *fmt, ...) __attribute__((format(printf, 2, 3)));
  // After a trace: the lifetimes made final, and what a call counts.
  void countWork(GraphEntry &e);
  // The traced signature's shape of work: its plan found (grown when the
  // signature does not fit) or made, and an executable graph of it chosen.
  int32_t bindPlan(GraphEntry &e);
  // Kernel nodes of `x` whose launch dims differ from the entry's (counting
  // stops past `stop`); SIZE_MAX when x has no graph yet.
  static size_t dimsDiffer(const GraphEntry &e, const GraphExec &x, size_t stop);
  GraphExec *closestExec(GraphShape &s, const GraphEntry &e);
  // Whether some kernel node of `x` has other launch dims than the entry's,
  // and all those that do are bounds_checked (their grids rounded).
  static bool roundedOnly(const GraphEntry &e, const GraphExec &x);
  // A signature called again whose graph holds another's values gets a
  // graph of its own while its shape has fewer than graphsPerShape and the
  // graphs' estimated memory stays within Settings::graphMemory; past them
  // it moves to another graph of its shape holding its launch dims, when
  // its own holds other dims.
  void promote(GraphEntry &e);
  // Drops an executable graph's device resources, and its estimate.
  void dropGraph(GraphExec &x);
  uint64_t execBytes_ = 0;  // the estimates of every built graph
  // The traced values made real: intermediates at their slots, input and
  // output addresses as patches. False when an address is none of these
  // (the program then runs again against the plan).
  bool resolve(GraphEntry &e, void *const *outData, const int64_t *outDims);
  // Writes the plan's current addresses into the nodes (after the plan moved).
  void rebase(GraphEntry &e);
  int32_t finishReplay(GraphEntry &e, void **outData, int64_t *outDims);
  // A launch without running the program: outputs allocated, addresses
  // patched, nodes set, the graph launched. `first`: the call that traced
  // the signature (not counted as a fast replay).
  int32_t fastReplay(GraphEntry &e, void *const *inputs, const hj_graph_value *values, void **outData,
                     int64_t *outDims, bool first = false);
  bool mapValues(GraphEntry &e);
  int32_t pushAndLaunch(GraphEntry &e);
  // HOSTJIT_GRAPH_DEVICE_UPDATES=auto: builds the entry's graph again to
  // take its node updates at launch (4 of its last 8 launches needed some),
  // or back for host updates, for good (the device fell behind them and
  // no grid changed lately); rebuilt_ says which, *rebuilt whether it did.
  int32_t rebuildForUpdates(GraphEntry &e, bool *rebuilt);
  // Builds the entry's executable graph from its operations' values.
  int32_t build(GraphEntry &e);
  int32_t checkZeroed(GraphEntry &e);
  void freeOutputs();
  void startReplay();
  void markDirty(GraphEntry &e, uint32_t op, const void *value, size_t offset, size_t bytes);
  void forgetSources(GraphEntry &e);
  void noteSources(GraphEntry &e);
  // The stream and dependencies of operation `index`, just traced; or
  // checked as it is replayed (a mismatch when they differ). Inside a
  // send/receive group both fail (outsideGroup).
  int32_t placeTraced(GraphEntry &e, uint32_t index);
  int32_t placeReplayed(GraphEntry &e, uint32_t index);
  int32_t outsideGroup(const PlannedOp &op);
  int32_t insideGroup(const char *what);
  // After a failed build, update or launch of a graph that communicates:
  // the other ranks must not wait for this one.
  int32_t abortComm(GraphEntry &e, int32_t status);
  // What the communicator's watchdog calls a launch of e's graph.
  static std::string watchName(const GraphEntry &e);
  void resetStreams();
  // A group's bracket (GROUP_BEGIN, GROUP_END) opens or closes it.
  void groupDepth(uint32_t kind);

  // Switches the mode and the context's call path with it.
  void enter(Mode mode);
  // A buffer of the program this call allocates (its zeroing or NaN fill, if
  // any, a node of the graph).
  BufferRequest request(uint64_t bytes, uint32_t flags, uint32_t dtype, const char *name,
                        const void *prefer = nullptr) const;

  GraphRoom r_;
  Mode mode_ = Mode::Off;
  std::unique_ptr<CallPath> tracePath_, replayPath_;
  RecordedPath recordedReplay_;  // replayPath_ while the record is on
  GraphEntry *cur_ = nullptr;
  SignatureCache signatures_;
  std::string reason_;
  CallOutcome outcome_;  // the last call's way (hj_graph_outcome)
  MemoryPlans plans_;  // per shape of work
  size_t lastOps_ = 0, lastAllocs_ = 0;  // the last trace's counts: the next one reserves them
  WorthPolicy worth_;  // per program: whether graph mode pays for its new signatures
  // A new signature of a program for which graph mode does not pay: true,
  // with reason_ saying why, when it runs eagerly.
  bool notWorthIt(const void *key, uint64_t keyBytes, bool miss);
  // The call in progress.
  std::vector<void *> inputs_;
  uint32_t numOutputs_ = 0, numDims_ = 0;
  size_t allocAt_ = 0, opAt_ = 0, event_ = 0;
  uint64_t liveBytes_ = 0;
  std::vector<char> tracedLive_;  // Trace: per allocation, not yet freed
  std::vector<std::pair<uint32_t, void *>> outputs_;    // Replay: outputs allocated by this call
  size_t recordMark_ = 0;
  hj_stats statsMark_{};
  bool mismatched_ = false;
  bool fast_ = false;
  bool reserve_ = false;      // the call is hj_graph_reserve's
  std::string uncapturable_;  // Trace: why the program cannot be a graph (a custom call's), "" when it can
  std::vector<void *> fastOut_;  // fast replay: the outputs, in allocation order
  std::vector<hj_graph_value> values_;  // this call's hj_graph_values
  std::vector<std::pair<const void *, uint32_t>> inputOrder_;  // resolve: the inputs by address
  // Streams and events of the run in progress: the operations' edges.
  OpOrder order_;
  int32_t group_ = -1;  // the collective node a GROUP_BEGIN opened
  uint32_t groupDepth_ = 0, partAt_ = 0;
};

}  // namespace hj
