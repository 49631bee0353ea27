// settings.h - a context's settings, decided once when it is made (from
// hj_options, else the environment), which every room reads.
#pragma once

#include <cstdint>

#include "hostjit/runtime.h"

namespace hj {

struct Settings {
  bool reuseZeroed = false;  // contract point 5: every zero_init buffer treated as resets_to_zero (unsafe)
  bool checkZeroed = false;  // contract point 6: HOSTJIT_CHECK_ZEROED
  bool fillNan = false;      // contract point 6: HOSTJIT_FILL_NAN
  bool sync = false;         // synchronise after every launch and memset (HOSTJIT_SYNC)
  uint32_t graphCache = 1024;  // graph mode: signatures kept (hj_options.graph_cache, HOSTJIT_GRAPH_CACHE)
  // graph mode: new signatures kept on probation, the first to leave the
  // cache until they are called again; past this many the oldest of them
  // leaves even when the cache has room (HOSTJIT_GRAPH_PROBATION; default
  // graphCache: only a full cache evicts; 0: no probation, least recently
  // used alone)
  uint32_t graphProbation = 1024;
  // graph mode: executable graphs kept per shape of work before a new
  // signature is bound to one of them (HOSTJIT_GRAPHS_PER_SHAPE; 0: never
  // shared); a signature whose launch dims equal a graph's is bound to it
  // whatever the count
  uint32_t graphsPerShape = 1024;
  // graph mode: device memory that executable graphs given to signatures
  // that came back may take, estimated per node (HOSTJIT_GRAPH_MEMORY_MB)
  uint64_t graphMemory = uint64_t{256} << 20;
  // graph mode: a program of fewer launches than this whose calls are
  // nearly all new signatures runs its new signatures eagerly (a trace and
  // node updates cost more than its launches; HOSTJIT_GRAPH_MIN_LAUNCHES,
  // 0: never)
  uint32_t graphMinLaunches = 4;
  // graph mode: a program whose last 4 graph launches each captured anew at
  // least this percent of the graph's operations (library calls whose sizes
  // or buffers changed) runs its new signatures eagerly: the captures cost
  // more than the launches a graph saves, and an eager call's kernels start
  // while it runs (HOSTJIT_GRAPH_RECAPTURE_PERCENT, 0: never)
  uint32_t graphRecapturePercent = 33;
  // graph mode: whether executable graphs take their kernel nodes' new
  // arguments and grids at launch, from an updater kernel at their root
  // (HOSTJIT_GRAPH_DEVICE_UPDATES): kNever (0), kAlways (1), or kAuto
  // (unset, "auto"): a graph is built again with them once 4 of its last 8
  // launches needed node updates, and back for host updates when its device
  // falls behind argument-only updates (GraphCache::rebuildForUpdates)
  enum DeviceUpdates : uint8_t { kNever, kAlways, kAuto };
  DeviceUpdates graphDeviceUpdates = kAuto;
  bool profile = false;  // hj_options.profile, HOSTJIT_PROFILE
  bool nvtx = false;     // NVTX ranges: HOSTJIT_NVTX, else whether a tool is attached
  uint32_t traceEvents = 262144;  // spans a profile keeps for its trace (HOSTJIT_TRACE_EVENTS)
  // Seconds a rank waits for the others before its communicator is aborted
  // (hj_options.comm_timeout, HOSTJIT_COMM_TIMEOUT); infinity: no bound.
  // commTimeoutGiven: one of those set it (else it is the default, 120).
  double commTimeout = 120;
  bool commTimeoutGiven = false;
};

// Whether an allocation with these hj_alloc flags comes from the zeroed
// arena (kept zero between uses, so no memset): zero_init, not an output,
// and resets_to_zero or, for every zero_init buffer, reuseZeroed. The one
// statement of the rule: eager buffers, graph mode's trace and the
// profile's timing of allocations all ask it.
inline bool fromZeroedArena(uint32_t flags, const Settings &s) {
  return (flags & HJ_ALLOC_ZERO_INIT) && !(flags & HJ_ALLOC_OUTPUT) &&
         ((flags & HJ_ALLOC_RESETS_TO_ZERO) || s.reuseZeroed);
}

}  // namespace hj
