// graph_entry.h - what graph mode keeps per signature (GraphEntry), per
// shape of work (GraphShape: its memory plan) and per executable graph
// (GraphExec), and the allocations, patches and node states they hold.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "graph/planned_op.h"
#include "graph/update_policy.h"

namespace hj {

// One hj_alloc of the program, in call order.
struct PlannedAlloc {
  std::vector<int64_t> sizes, strides;  // strides empty: contiguous
  uint32_t dtype = 0, flags = 0;
  uint64_t bytes = 0;
  bool output = false;
  bool zeroed = false;  // lives in the block's zeroed part (resets_to_zero)
  size_t offset = 0;    // intermediates: offset in the block
  size_t firstEvent = 0, lastEvent = SIZE_MAX;  // its alloc and its free, in call order
  int32_t op = -1;      // its memset or fill operation, if any
  std::string name;
  char lastKernel[40] = {};  // HOSTJIT_CHECK_ZEROED: the last kernel given it
  uint32_t stream = 0;        // the program's stream when it was allocated
  bool otherStreams = false;  // work on another stream uses it (hj_record_use)
};

// An address a fast replay writes into a node: the 8 bytes at
// values[offset] of ops[op] come from a source, input i (source i) or the
// program's j-th output allocation (source numInputs + j); for the plan's
// own addresses (GraphEntry::inner) the source is the allocation.
struct Patch {
  uint32_t op = 0, offset = 0, source = 0;
  int64_t delta = 0;  // addresses: bytes past the source's start (a view's offset)
};

// What a node of an executable graph holds now: compared with a
// signature's operation to find the nodes that must be set.
struct NodeState {
  int64_t dims[6] = {};     // Kernel: grid and block
  int64_t matmul[10] = {};  // Library: the sizes and strides (matmulSizes), not in its shape of work
  uint64_t bytes = 0;       // Memset, Fill
  std::vector<unsigned char> values;
};

// One executable graph of a shape of work, and the signatures bound to it.
// Its nodes hold `holder`'s values but for the operations on the holder's
// dirty list; another signature compares its operations with `nodes`.
struct GraphExec {
  std::unique_ptr<Graph> graph;  // NULL: built at the next launch
  uint64_t bytes = 0;            // the device memory it is estimated to hold (kNodeBytes per node)
  std::vector<NodeState> nodes;
  const void *holder = nullptr;  // the GraphEntry whose values the nodes hold, or NULL
  uint32_t users = 0;            // signatures bound to it
  uint64_t lastUse = 0;
  bool deviceUpdates = false;  // the graph takes its kernel nodes' updates at launch
  UpdatePolicy updates;        // when it is built again for or against them
};

// A shape of work (topologyOf: the same operations in the same order with
// the same dependencies, and the same allocations with the same
// lifetimes) and its memory plan, shared by every signature of that shape:
// each intermediate has a slot of `capacity` bytes at `offset` in one
// block, so a signature fits when each of its intermediates fits its slot.
// Capacities are rounded up to powers of two; a signature that does not
// fit grows them (a new block; `epoch` counts the moves, and signatures
// planned at an older epoch set their nodes' addresses again).
struct GraphShape {
  std::string topology;
  std::vector<size_t> offset, capacity;  // per allocation (outputs: 0)
  void *block = nullptr;
  size_t blockBytes = 0, zeroedOffset = 0, zeroedBytes = 0;
  uint64_t epoch = 0;
  std::vector<std::unique_ptr<GraphExec>> execs;
  uint32_t users = 0;  // signatures of this shape
  std::shared_ptr<void> keepAlive;  // the kernel table's modules or libraries
};

struct GraphEntry {
  std::string key;
  std::string eagerReason;  // not empty: this signature runs eagerly, for this reason
  std::vector<PlannedAlloc> allocs;
  std::vector<PlannedOp> ops;
  GraphShape *shape = nullptr;  // its shape of work and memory plan (NULL until planned)
  GraphExec *exec = nullptr;    // the executable graph it is bound to
  uint64_t epoch = 0;           // the plan's epoch its nodes' intermediate addresses are of
  std::vector<Patch> inner;     // where the plan's addresses go (source: the allocation)
  bool resolved = false;        // patches, outputs and values are known (after its first launch)
  bool innerKnown = false;      // `inner` holds every use of the plan's addresses (resolved from the trace)
  // Fast replay.
  bool fast = false;
  uint32_t numInputs = 0;
  std::vector<uint32_t> outputAllocs;   // the output allocations, in order (sources numInputs + j)
  std::vector<Patch> patches;           // sorted by source
  std::vector<uint32_t> patchStart;     // patches of source s: [patchStart[s], patchStart[s + 1])
  std::vector<const void *> sourceValue;  // each source's address in the nodes now (kUnknown: patch it)
  std::vector<uint32_t> outSource;      // per program output: its source
  std::vector<Patch> valuePatches;      // where each hj_graph_value goes (source: its byte count)
  std::vector<uint32_t> dirty;          // ops whose values differ from the executable graph's
  std::vector<int64_t> outDims;
  // What one call counts in hj_stats beyond its outputs' allocations.
  uint64_t fastAllocs = 0, fastMemsets = 0, fastFills = 0, frees = 0, launches = 0;
  uint64_t collectives = 0, collectiveBytes = 0, libraryCalls = 0;
  bool streams = false;     // work on another stream than 0
  bool unknownUse = false;  // hj_record_use of an address no traced buffer starts at
  uint64_t peakBytes = 0;  // the most bytes live at once during the program
  std::string watchWhat;   // what the communicator's watchdog calls a launch ("": not made since the ops changed)
  uint64_t lastUse = 0;
  // Seen once so far: the first to leave the cache (SignatureCache's probation).
  bool probation = false;
  // Evicted from probation before and called again while the cache had
  // room: it recurs, so it gets a graph of its own when planned.
  bool recurs = false;
  // Its program's sizes change on most calls (hj_graph_sizes_change): a
  // graph made for it takes node updates at launch from its first build.
  bool sizesChange = false;
};

}  // namespace hj
