// memory_plans.cpp - the memory plans of shapes of work: intermediates in
// slots of one block, shared between buffers whose lifetimes do not
// overlap, grown when a signature of the shape needs more.
#include "graph/memory_plans.h"

#include <algorithm>
#include <string>
#include <vector>

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

int32_t MemoryPlans::plan(GraphEntry &e) {
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
      ++unique_;
      owned->topology.append(reinterpret_cast<const char *>(&unique_), sizeof unique_);
    }
    owned->offset.assign(e.allocs.size(), 0);
    owned->capacity.assign(e.allocs.size(), 0);
    if (int32_t st = grow(*owned, e)) return st;
    s = owned.get();
    shapes_.emplace(std::string_view(s->topology), std::move(owned));
  } else if (!fits(*s, e)) {
    if (int32_t st = grow(*s, e)) return st;
  }
  e.shape = s;
  ++s->users;
  for (const PlannedOp &op : e.ops)
    if (op.table() && !s->keepAlive) {
      s->keepAlive = op.table()->keepAlive;
      break;
    }
  return HJ_OK;
}

int32_t MemoryPlans::grow(GraphShape &s, const GraphEntry &e) {
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
    if (int32_t st = buffers_.memory().allocate(total, &block)) {
      if (st == HJ_ERR_INJECTED) return st;
      std::string why = hj_last_error();
      return fail(st, "graph mode: the memory plan of %zu intermediates (%zu bytes): %s", general.size() + zeroed.size(),
                  total, why.c_str());
    }
    if (zeroedBytes) {
      // resets_to_zero buffers: zeroed once here, left zero by their kernels.
      int32_t st = injector_.check("zeroing the memory plan of a graph (%zu bytes)", zeroedBytes);
      if (st == HJ_OK) st = backend_.memsetZero(static_cast<char *>(block) + generalBytes, zeroedBytes);
      if (st) {
        buffers_.memory().release(block, total);
        return st;
      }
      ++stats_.memsets;  // like the arena's growth; not recorded: the program did not call it
    }
  }
  if (s.block) {  // the graphs that used it are done with it (release waits for the device)
    buffers_.memory().release(s.block, s.blockBytes);
    stats_.graph_bytes -= s.blockBytes;
    ++stats_.graph_replans;
  }
  stats_.graph_bytes += total;
  s.block = block;
  s.blockBytes = total;
  s.zeroedOffset = generalBytes;
  s.zeroedBytes = zeroedBytes;
  s.capacity = std::move(capacity);
  s.offset = std::move(offset);
  ++s.epoch;
  return HJ_OK;
}

void MemoryPlans::release(GraphShape *s) {
  if (s->block) {
    buffers_.memory().release(s->block, s->blockBytes);
    stats_.graph_bytes -= s->blockBytes;
  }
  shapes_.erase(std::string_view(s->topology));
}

int32_t MemoryPlans::checkZero(bool *isZero) {
  for (auto &kv : shapes_) {
    const GraphShape &s = *kv.second;
    if (s.zeroedBytes == 0 || !s.block) continue;
    if (int32_t st = backend_.synchronize()) return st;
    std::vector<unsigned char> host(s.zeroedBytes);
    if (int32_t st = backend_.copyToHost(host.data(), static_cast<char *>(s.block) + s.zeroedOffset, host.size()))
      return st;
    for (unsigned char c : host)
      if (c) {
        *isZero = false;
        return HJ_OK;
      }
  }
  return HJ_OK;
}

}  // namespace hj
