// graph_executor.h - graph mode's executable graphs: a planned signature
// bound to one of its shape's graphs (or one of its own when it comes
// back), its addresses resolved into patches, the nodes that differ set,
// the graph built, updated or rebuilt for updates at launch, and launched;
// fast replays, which do all that without running the program. The graph
// cache decides which call goes where; this owns what it does with a
// graph.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "graph/call_outcome.h"
#include "graph/graph_entry.h"
#include "graph/graph_room.h"
#include "graph/replay_matcher.h"
#include "graph/signature_cache.h"
#include "graph/worth_policy.h"

namespace hj {

// The graph-mode call in progress, as hj_graph_call gave it.
struct GraphCall {
  std::vector<void *> inputs;
  std::vector<hj_graph_value> values;  // kernel arguments outside the key
  uint32_t numOutputs = 0, numDims = 0;
  bool fast = false;     // the caller allows replays that skip the program
  bool reserve = false;  // hj_graph_reserve's
};

class GraphExecutor {
 public:
  // Ticks order graphs' uses (signatures); a launch tells `worth` what it
  // re-captured and `outcome` whether it rebuilt; `dropCommunicating`
  // drops the cache's graphs that communicate (before an abort).
  GraphExecutor(const GraphRoom &room, SignatureCache &signatures, WorthPolicy &worth, CallOutcome &outcome,
                std::function<void()> dropCommunicating)
      : r_(room), signatures_(signatures), worth_(worth), outcome_(outcome),
        dropCommunicating_(std::move(dropCommunicating)) {}

  // The planned signature bound to an executable graph of its shape: the
  // one whose kernel nodes differ from it in the fewest launch dims, or a
  // new one.
  void bind(GraphEntry &e);
  // A signature called again whose graph holds another's values gets a
  // graph of its own while its shape has fewer than graphsPerShape and the
  // graphs' estimated memory stays within Settings::graphMemory (and, next
  // to a graph taking updates at launch, while the shape has at most
  // kOwnGraphsBesideDeviceUpdates, unless a library call's sizes differ);
  // past them it moves to another graph of its shape holding its launch
  // dims, when its own holds other dims.
  void promote(GraphEntry &e);
  // Lets go of the entry's executable graph (dropped with its last
  // signature); when the entry was its shape's last, every graph of the
  // shape is dropped and the shape returned for its plan to be released,
  // else NULL.
  GraphShape *unbind(GraphEntry &e);
  // Drops an executable graph's device resources, and its estimate.
  void dropGraph(GraphExec &x);

  // The traced values made real: intermediates at their slots, input and
  // output addresses as patches. False when an address is none of these
  // (the program then runs again against the plan).
  bool resolve(GraphEntry &e, const GraphCall &call, void *const *outData, const int64_t *outDims);
  // After a replay that ran the program against the plan: the patches
  // learned from its addresses when the trace could not resolve them, the
  // graph launched. The matcher's outputs are freed on failure.
  int32_t finishReplay(GraphEntry &e, const GraphCall &call, ReplayMatcher &m, void **outData, int64_t *outDims);
  // A launch without running the program: outputs allocated, addresses
  // patched, nodes set, the graph launched. `first`: the call that traced
  // the signature (not counted as a fast replay).
  int32_t fastReplay(GraphEntry &e, void *const *inputs, const hj_graph_value *values, void **outData,
                     int64_t *outDims, bool first = false);
  // The nodes no longer hold the entry's input and output addresses.
  static void forgetSources(GraphEntry &e);
  // After an exception in a fast replay: the outputs it allocated freed.
  void abandon();

 private:
  // Kernel nodes of `x` whose launch dims differ from the entry's (counting
  // stops past `stop`); SIZE_MAX when x has no graph yet.
  static size_t dimsDiffer(const GraphEntry &e, const GraphExec &x, size_t stop);
  GraphExec *closestExec(GraphShape &s, const GraphEntry &e);
  // Whether some kernel node of `x` has other launch dims than the entry's,
  // and all those that do are bounds_checked (their grids rounded).
  static bool roundedOnly(const GraphEntry &e, const GraphExec &x);
  // Whether some library call node of `x` holds other sizes than the
  // entry's (its update would capture it anew).
  static bool resizedLibraryCall(const GraphEntry &e, const GraphExec &x);
  // Writes the plan's current addresses into the nodes (after the plan moved).
  void rebase(GraphEntry &e);
  bool mapValues(GraphEntry &e, const std::vector<hj_graph_value> &values);
  void noteSources(GraphEntry &e, const GraphCall &call, const std::vector<std::pair<uint32_t, void *>> &outputs);
  int32_t pushAndLaunch(GraphEntry &e);
  // HOSTJIT_GRAPH_DEVICE_UPDATES=auto: builds the entry's graph again to
  // take its node updates at launch (4 of its last 8 launches needed some),
  // or back for host updates, for good (the device fell behind them and
  // no grid changed lately); *rebuilt says whether it did.
  int32_t rebuildForUpdates(GraphEntry &e, bool *rebuilt);
  // Builds the entry's executable graph from its operations' values.
  int32_t build(GraphEntry &e);
  int32_t checkZeroed(GraphEntry &e);
  // After a failed build, update or launch of a graph that communicates:
  // the other ranks must not wait for this one.
  int32_t abortComm(GraphEntry &e, int32_t status);
  // What the communicator's watchdog calls a launch of e's graph.
  static std::string watchName(const GraphEntry &e);
  uint32_t programStream() const { return r_.path->stream(); }

  GraphRoom r_;
  SignatureCache &signatures_;
  WorthPolicy &worth_;
  CallOutcome &outcome_;
  std::function<void()> dropCommunicating_;
  uint64_t execBytes_ = 0;        // the estimates of every built graph
  std::vector<void *> fastOut_;  // fast replay: the outputs, in allocation order
  std::vector<std::pair<const void *, uint32_t>> inputOrder_;  // resolve: the inputs by address
};

}  // namespace hj
