// graph_binding.cpp - a planned signature bound to one of its shape's
// executable graphs, or to a graph of its own when it comes back
// (promote), and let go of.
#include "graph/graph_executor.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>

#include "base/error.h"
#include "graph/graph_internal.h"
#include "graph/memory_plans.h"

namespace hj {

void GraphExecutor::dropGraph(GraphExec &x) {
  x.graph.reset();
  execBytes_ -= x.bytes;
  x.bytes = 0;
}

GraphShape *GraphExecutor::unbind(GraphEntry &e) {
  GraphShape *s = e.shape;
  if (GraphExec *x = e.exec) {
    if (x->holder == &e) x->holder = nullptr;
    if (--x->users == 0) {
      auto it = std::find_if(s->execs.begin(), s->execs.end(), [&](const auto &p) { return p.get() == x; });
      HJ_INVARIANT(it != s->execs.end());
      dropGraph(*x);
      s->execs.erase(it);
    }
  }
  e.exec = nullptr;
  e.shape = nullptr;
  e.resolved = false;
  if (!s || --s->users > 0) return nullptr;
  for (auto &p : s->execs) dropGraph(*p);  // the graphs go before the memory they use
  s->execs.clear();
  return s;
}

size_t GraphExecutor::dimsDiffer(const GraphEntry &e, const GraphExec &x, size_t stop) {
  if (!x.graph || x.nodes.size() != e.ops.size()) return SIZE_MAX;
  size_t differ = 0;
  for (size_t i = 0; i < e.ops.size() && differ <= stop; ++i) differ += newDims(e.ops[i], x.nodes[i]);
  return differ;
}

bool GraphExecutor::roundedOnly(const GraphEntry &e, const GraphExec &x) {
  bool differ = false;
  for (size_t i = 0; i < e.ops.size(); ++i) {
    const PlannedOp &op = e.ops[i];
    if (!newDims(op, x.nodes[i])) continue;
    if (!(op.kernelEntry()->launchFlags & HJ_LAUNCH_BOUNDS_CHECKED)) return false;
    differ = true;
  }
  return differ;
}

bool GraphExecutor::resizedLibraryCall(const GraphEntry &e, const GraphExec &x) {
  if (x.nodes.size() != e.ops.size()) return false;
  int64_t sizes[10];
  for (size_t i = 0; i < e.ops.size(); ++i) {
    if (!std::holds_alternative<PlannedLibrary>(e.ops[i].work)) continue;
    matmulSizes(e.ops[i], sizes);
    if (std::memcmp(sizes, x.nodes[i].matmul, sizeof sizes) != 0) return true;
  }
  return false;
}

GraphExec *GraphExecutor::closestExec(GraphShape &s, const GraphEntry &e) {
  GraphExec *x = nullptr;
  size_t best = SIZE_MAX;
  for (auto &p : s.execs) {
    size_t differ = dimsDiffer(e, *p, best);
    if (differ == SIZE_MAX) continue;
    if (p->deviceUpdates) differ = 0;  // new dims cost it next to nothing
    if (differ < best || (differ == best && p->lastUse < x->lastUse)) {
      x = p.get();
      best = differ;
    }
  }
  return x;
}

void GraphExecutor::promote(GraphEntry &e) {
  GraphShape &s = *e.shape;
  GraphExec *x = e.exec;
  if (x->holder == &e || s.topology[0] != 'T') return;
  // A graph that takes its node updates at launch serves every signature
  // of its shape for about 0.1 us a kernel node; a few dozen signatures
  // that come back still replay faster from graphs of their own, many do
  // not (kOwnGraphsBesideDeviceUpdates). A library call holding other
  // sizes is captured anew on the host at every launch (tens of us), so a
  // signature with one always does.
  if (x->deviceUpdates && s.execs.size() > kOwnGraphsBesideDeviceUpdates && !resizedLibraryCall(e, *x)) return;
  // A graph of its own while the budget allows: it then replays with no
  // node to set (new arguments cost the driver about 0.36 us a node per
  // call, a graph about 100 us once). Past the budget, another graph of
  // the shape that holds its launch dims (bounds_checked kernels' rounded
  // grids make them common), whose nodes need new arguments only.
  GraphExec *to = nullptr;
  if (s.execs.size() < r_.settings.graphsPerShape && execBytes_ + kNodeBytes * e.ops.size() <= r_.settings.graphMemory) {
    to = s.execs.emplace_back(std::make_unique<GraphExec>()).get();
  } else if (r_.settings.graphsPerShape > 0 && dimsDiffer(e, *x, 0) != 0) {  // 0: no graph is shared
    for (auto &p : s.execs)
      if (p.get() != x && dimsDiffer(e, *p, 0) == 0) {
        to = p.get();
        break;
      }
  }
  if (!to) return;
  if (--x->users == 0) {
    auto it = std::find_if(s.execs.begin(), s.execs.end(), [&](const auto &p) { return p.get() == x; });
    dropGraph(*x);
    s.execs.erase(it);
  }
  e.exec = to;
  ++to->users;
  for (uint32_t i : e.dirty) e.ops[i].dirty = false;
  e.dirty.clear();
}

void GraphExecutor::bind(GraphEntry &e) {
  GraphShape *s = e.shape;
  bool shared = MemoryPlans::shared(*s);
  // The executable graph to bind: the one of this shape whose kernel nodes
  // differ from the signature's in the fewest launch dims (the least
  // recently used among equals), since setting a node's grid or block makes
  // the driver's next launch of the graph cost about 1.5 us more per such
  // node, against about 0.4 us for new arguments (bench/RESULTS.md). A
  // signature seen once (a decode loop's) never pays for instantiating a
  // graph of its own; one that comes back gets its own (promote()). With
  // Settings::graphsPerShape 0 every signature gets its own at once.
  GraphExec *x = nullptr;
  if (shared && r_.settings.graphsPerShape > 0) x = closestExec(*s, e);
  // Rounded grids (bounds_checked kernels) take few values: a signature
  // whose rounded grids no graph of its shape holds gets a graph of its
  // own while the budget allows, and the signatures that round alike are
  // then bound to it with new arguments only.
  if (x && !x->deviceUpdates && roundedOnly(e, *x) && s->execs.size() < r_.settings.graphsPerShape &&
      execBytes_ + kNodeBytes * e.ops.size() <= r_.settings.graphMemory)
    x = nullptr;
  if (x) ++r_.stats.graph_reuses;
  if (!x) {
    x = s->execs.emplace_back(std::make_unique<GraphExec>()).get();
    if (e.sizesChange) x->updates.expectUpdates();
  }
  e.exec = x;
  ++x->users;
  x->lastUse = signatures_.tick();
  for (size_t i = 0; i < e.allocs.size(); ++i) e.allocs[i].offset = s->offset[i];
  e.epoch = s->epoch;
}

}  // namespace hj
