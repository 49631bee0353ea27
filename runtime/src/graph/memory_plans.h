// memory_plans.h - graph mode's memory plans, one per shape of work: each
// intermediate of the shape's signatures has a slot in one block, shared
// by buffers whose lifetimes do not overlap, grown (a new block, the epoch
// counted) when a signature needs more; the zeroed part of the block
// (resets_to_zero) zeroed once. Keyed by topology (topologyOf), so that
// signatures of one shape share a plan.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <unordered_map>

#include "backend/backend.h"
#include "base/fault_injection.h"
#include "graph/graph_entry.h"
#include "memory/buffers.h"

namespace hj {

class MemoryPlans {
 public:
  MemoryPlans(Backend &backend, Buffers &buffers, FaultInjector &injector, hj_stats &stats)
      : backend_(backend), buffers_(buffers), injector_(injector), stats_(stats) {}
  MemoryPlans(const MemoryPlans &) = delete;
  MemoryPlans &operator=(const MemoryPlans &) = delete;

  // The traced entry's shape of work: the plan of its topology, found (and
  // grown when the entry does not fit) or made (a shape of its own when
  // its work is never shared: shared() false). Sets e.shape and counts the
  // entry as one of its users.
  int32_t plan(GraphEntry &e);
  // Whether signatures of other keys may share the shape (and its graphs).
  static bool shared(const GraphShape &s) { return !s.topology.empty() && s.topology[0] == 'T'; }
  // A shape no signature uses any more, its graphs gone: its block goes
  // back and the shape with it.
  void release(GraphShape *s);
  // Whether the zeroed part of every plan is zero (synchronises first).
  int32_t checkZero(bool *isZero);

 private:
  int32_t grow(GraphShape &s, const GraphEntry &e);

  Backend &backend_;
  Buffers &buffers_;
  FaultInjector &injector_;
  hj_stats &stats_;
  std::unordered_map<std::string_view, std::unique_ptr<GraphShape>> shapes_;  // keys: the shapes' own topology
  uint64_t unique_ = 0;  // shapes never shared, each its own key
};

}  // namespace hj
