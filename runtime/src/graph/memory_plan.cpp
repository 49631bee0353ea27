// memory_plan.cpp - the memory plans of shapes of work: intermediates in
// slots of one block, shared between buffers whose lifetimes do not
// overlap, grown when a signature of the shape needs more; and the
// executable graph a new signature is bound to.
#include "graph/graph_cache.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>

#include "base/error.h"
#include "graph/graph_internal.h"

namespace hj {

namespace {

// The shape of a graph's work: what an executable graph and its memory plan
// must already hold for another signature's nodes to be set into it. Sizes,
// grids, arguments and addresses may differ; node kinds, their order and
// dependencies, the kernels (and their shared memory, whose opt-in the
// build made), fill patterns, collectives and library calls (but for
// their sizes and strides) may not, nor the allocations' order, lifetimes
// and streams. Empty: never shared (a
// cooperative kernel's grid is checked for co-residency when it is built).
std::string topologyOf(const GraphEntry &e) {
  std::string t = "T";
  auto put = [&](const void *p, size_t n) { t.append(static_cast<const char *>(p), n); };
  auto word = [&](uint64_t v) { put(&v, sizeof v); };
  for (const PlannedOp &op : e.ops) {
    word(uint64_t(op.kind()) | uint64_t(op.stream) << 8 | uint64_t(op.deps.size()) << 32);
    for (uint32_t d : op.deps) word(d);
    bool shared = std::visit(
        Overloaded{[&](const PlannedKernel &k) {
                     if (k.table->kernels[k.kernel].launchFlags & HJ_LAUNCH_COOPERATIVE) return false;
                     word(reinterpret_cast<uintptr_t>(k.table));
                     word(k.kernel);
                     word(uint64_t(k.dims[6]));
                     return true;
                   },
                   [&](const PlannedCustom &c) {
                     word(reinterpret_cast<uintptr_t>(c.table));
                     word(c.kernel);
                     word(0);
                     return true;
                   },
                   [&](const PlannedFill &f) {
                     word(f.pattern);
                     word(f.width);
                     word(f.alloc);
                     return true;
                   },
                   [&](const PlannedMemset &m) {
                     word(m.alloc);
                     return true;
                   },
                   [&](const PlannedCollective &c) {
                     for (const CollectivePart &p : c.parts) {
                       word(uint64_t(p.kind) | uint64_t(p.dtype) << 8 | uint64_t(p.op) << 16 |
                            uint64_t(uint32_t(p.peer)) << 32);
                       word(p.count);
                     }
                     return true;
                   },
                   [&](const PlannedLibrary &l) {
                     // Not its sizes or strides: a new size captures the
                     // library's calls again into the child graph node, and
                     // when the library chose kernels of another topology
                     // the driver refuses the update and the graph is built
                     // again (replay()), keeping the shape's memory plan.
                     const MatmulCall &m = l.matmul;
                     word(m.workspaceBytes);
                     word(uint64_t(m.aType) | uint64_t(m.cType) << 16 | uint64_t(m.flags) << 32);
                     put(&m.alpha, sizeof m.alpha);
                     put(&m.beta, sizeof m.beta);
                     return true;
                   }},
        op.work);
    if (!shared) return std::string();
  }
  word(e.allocs.size());
  for (const PlannedAlloc &a : e.allocs) {
    word(a.firstEvent);
    word(a.lastEvent);
    word(uint64_t(a.stream) | uint64_t(a.otherStreams) << 32 | uint64_t(a.zeroed) << 33 | uint64_t(a.output) << 34 |
         uint64_t(uint32_t(a.op)) << 40);
  }
  return t;
}

bool fits(const GraphShape &s, const GraphEntry &e) {
  for (size_t i = 0; i < e.allocs.size(); ++i)
    if (!e.allocs[i].output && footprint(e.allocs[i].bytes) > s.capacity[i]) return false;
  return true;
}

}  // namespace

void GraphCache::countWork(GraphEntry &e) {
  e.fastAllocs = e.fastMemsets = e.fastFills = e.launches = e.libraryCalls = 0;
  for (PlannedAlloc &a : e.allocs) {
    if (a.output) continue;
    // Nodes of different streams may run at once, in any order (conflict()).
    if (e.streams && e.unknownUse) a.lastEvent = SIZE_MAX;
    ++e.fastAllocs;
    if (a.op >= 0) ++(e.ops[a.op].kind() == GraphNode::Kind::Memset ? e.fastMemsets : e.fastFills);
  }
  for (const PlannedOp &op : e.ops) {
    if (op.kind() == GraphNode::Kind::Library || op.kind() == GraphNode::Kind::Custom) ++e.libraryCalls;
    if (op.kind() == GraphNode::Kind::Kernel) ++e.launches;
  }
  e.dirty.reserve(e.ops.size());  // markDirty then never allocates
}

int32_t GraphCache::growPlan(GraphShape &s, const GraphEntry &e) {
  std::vector<size_t> capacity = s.capacity, offset(e.allocs.size(), 0);
  std::vector<uint32_t> general, zeroed;
  for (uint32_t i = 0; i < e.allocs.size(); ++i) {
    const PlannedAlloc &a = e.allocs[i];
    if (a.output) continue;
    capacity[i] = std::max(capacity[i], slotBytes(a.bytes));
    (a.zeroed ? zeroed : general).push_back(i);
  }
  size_t generalBytes = place(e.allocs, general, capacity, offset, 0);
  size_t zeroedBytes = place(e.allocs, zeroed, capacity, offset, generalBytes);
  size_t total = generalBytes + zeroedBytes;
  void *block = nullptr;
  if (total) {
    if (int32_t st = r_.buffers.memory().allocate(total, &block)) {
      if (st == HJ_ERR_INJECTED) return st;
      std::string why = hj_last_error();
      return fail(st, "graph mode: the memory plan of %zu intermediates (%zu bytes): %s", general.size() + zeroed.size(),
                  total, why.c_str());
    }
    if (zeroedBytes) {
      // resets_to_zero buffers: zeroed once here, left zero by their kernels.
      int32_t st = r_.injector.check("zeroing the memory plan of a graph (%zu bytes)", zeroedBytes);
      if (st == HJ_OK) st = r_.backend.memsetZero(static_cast<char *>(block) + generalBytes, zeroedBytes);
      if (st) {
        r_.buffers.memory().release(block, total);
        return st;
      }
      ++r_.stats.memsets;  // like the arena's growth; not recorded: the program did not call it
    }
  }
  if (s.block) {  // the graphs that used it are done with it (release waits for the device)
    r_.buffers.memory().release(s.block, s.blockBytes);
    r_.stats.graph_bytes -= s.blockBytes;
    ++r_.stats.graph_replans;
  }
  r_.stats.graph_bytes += total;
  s.block = block;
  s.blockBytes = total;
  s.zeroedOffset = generalBytes;
  s.zeroedBytes = zeroedBytes;
  s.capacity = std::move(capacity);
  s.offset = std::move(offset);
  ++s.epoch;
  return HJ_OK;
}

size_t GraphCache::dimsDiffer(const GraphEntry &e, const GraphExec &x, size_t stop) {
  if (!x.graph || x.nodes.size() != e.ops.size()) return SIZE_MAX;
  size_t differ = 0;
  for (size_t i = 0; i < e.ops.size() && differ <= stop; ++i) differ += newDims(e.ops[i], x.nodes[i]);
  return differ;
}

bool GraphCache::roundedOnly(const GraphEntry &e, const GraphExec &x) {
  bool differ = false;
  for (size_t i = 0; i < e.ops.size(); ++i) {
    const PlannedOp &op = e.ops[i];
    if (!newDims(op, x.nodes[i])) continue;
    if (!(op.kernelEntry()->launchFlags & HJ_LAUNCH_BOUNDS_CHECKED)) return false;
    differ = true;
  }
  return differ;
}

GraphExec *GraphCache::closestExec(GraphShape &s, const GraphEntry &e) {
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

void GraphCache::promote(GraphEntry &e) {
  GraphShape &s = *e.shape;
  GraphExec *x = e.exec;
  if (x->holder == &e || s.topology[0] != 'T') return;
  // A graph that takes its node updates at launch serves every signature
  // of its shape for about 0.1 us a node; a few dozen signatures that come
  // back still replay faster from graphs of their own, many do not
  // (kOwnGraphsBesideDeviceUpdates).
  if (x->deviceUpdates && s.execs.size() > kOwnGraphsBesideDeviceUpdates) return;
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

int32_t GraphCache::bindPlan(GraphEntry &e) {
  std::string topology = topologyOf(e);
  bool shared = !topology.empty();
  GraphShape *s = nullptr;
  if (shared)
    if (auto it = shapes_.find(std::string_view(topology)); it != shapes_.end()) s = it->second.get();
  if (!s) {
    auto owned = std::make_unique<GraphShape>();
    if (shared) {
      owned->topology = std::move(topology);
    } else {  // a key no topology has (those start with 'T')
      owned->topology = "U";
      ++uniqueShapes_;
      owned->topology.append(reinterpret_cast<const char *>(&uniqueShapes_), sizeof uniqueShapes_);
    }
    owned->offset.assign(e.allocs.size(), 0);
    owned->capacity.assign(e.allocs.size(), 0);
    if (int32_t st = growPlan(*owned, e)) return st;
    s = owned.get();
    shapes_.emplace(std::string_view(s->topology), std::move(owned));
  } else if (!fits(*s, e)) {
    if (int32_t st = growPlan(*s, e)) return st;
  }
  e.shape = s;
  ++s->users;
  for (const PlannedOp &op : e.ops)
    if (op.table() && !s->keepAlive) {
      s->keepAlive = op.table()->keepAlive;
      break;
    }
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
  if (!x) x = s->execs.emplace_back(std::make_unique<GraphExec>()).get();
  e.exec = x;
  ++x->users;
  x->lastUse = signatures_.tick();
  for (size_t i = 0; i < e.allocs.size(); ++i) e.allocs[i].offset = s->offset[i];
  e.epoch = s->epoch;
  return HJ_OK;
}

}  // namespace hj
