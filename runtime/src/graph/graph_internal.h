// graph_internal.h - what the graph cache's files share: the memory plan's
// alignment and placement, fake trace addresses, nodes made from planned
// operations.
#pragma once

#include <algorithm>
#include <cstring>
#include <vector>

#include "graph/graph_cache.h"

namespace hj {

inline constexpr size_t kAlign = 256;

// A source address no buffer has: the nodes' values must be patched.
inline const void *const kUnknown = reinterpret_cast<const void *>(~uintptr_t{0});

// Bytes a planned buffer takes: aligned, and never 0, so that two live
// buffers never share an address.
inline size_t footprint(uint64_t bytes) { return std::max<size_t>((bytes + kAlign - 1) / kAlign * kAlign, kAlign); }

// The addresses handed out while tracing: never dereferenced and never a
// real buffer (non-canonical on x86-64 and AArch64).
inline void *fakeAddress(size_t index) {
  return reinterpret_cast<void *>(uintptr_t{0xF00D} << 48 | (static_cast<uintptr_t>(index) + 1) << 8);
}

// Two buffers may share memory when their lifetimes do not overlap and the
// graph orders every use of one before every use of the other: both are
// used on one stream only, the same (its nodes form a chain).
inline bool conflict(const PlannedAlloc &a, const PlannedAlloc &b) {
  if (a.stream != b.stream || a.otherStreams || b.otherStreams) return true;
  return a.firstEvent <= b.lastEvent && b.firstEvent <= a.lastEvent;
}

// Gives each of `which` an offset: the lowest at which it overlaps no buffer
// placed before it whose lifetime overlaps its own; the largest go first.
// Returns the bytes the buffers span.
inline size_t place(std::vector<PlannedAlloc> &allocs, const std::vector<uint32_t> &which) {
  std::vector<uint32_t> order = which;
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t a, uint32_t b) { return footprint(allocs[a].bytes) > footprint(allocs[b].bytes); });
  std::vector<uint32_t> placed;
  std::vector<std::pair<size_t, size_t>> busy;
  size_t total = 0;
  for (uint32_t i : order) {
    PlannedAlloc &a = allocs[i];
    size_t size = footprint(a.bytes);
    busy.clear();
    for (uint32_t j : placed)
      if (conflict(a, allocs[j])) busy.emplace_back(allocs[j].offset, allocs[j].offset + footprint(allocs[j].bytes));
    std::sort(busy.begin(), busy.end());
    size_t off = 0;
    for (const auto &[lo, hi] : busy) {
      if (off + size <= lo) break;
      off = std::max(off, hi);
    }
    a.offset = off;
    total = std::max(total, off + size);
    placed.push_back(i);
  }
  return total;
}

inline GraphNode nodeOf(const GraphEntry &e, const PlannedOp &op, Comm *comm) {
  GraphNode n;
  n.kind = op.kind;
  n.deps = op.deps.data();
  n.numDeps = static_cast<uint32_t>(op.deps.size());
  if (op.kind == GraphNode::Kind::Collective) {
    n.comm = comm;
    n.parts = op.parts.data();
    n.numParts = static_cast<uint32_t>(op.parts.size());
    n.buffers = reinterpret_cast<void *const *>(op.values.data());
  } else if (op.kind == GraphNode::Kind::Library) {
    n.matmul = &op.matmul;
    n.buffers = reinterpret_cast<void *const *>(op.values.data());
  } else if (op.kind == GraphNode::Kind::Custom) {
    n.kernel = &op.table->kernels[op.kernel];
    n.params = const_cast<void **>(op.params.data());
    n.site = op.site.c_str();
  } else if (op.kind == GraphNode::Kind::Kernel) {
    n.kernel = &op.table->kernels[op.kernel];
    n.grid = {uint32_t(op.dims[0]), uint32_t(op.dims[1]), uint32_t(op.dims[2])};
    n.block = {uint32_t(op.dims[3]), uint32_t(op.dims[4]), uint32_t(op.dims[5])};
    n.smem = uint32_t(op.dims[6]);
    n.params = const_cast<void **>(op.params.data());
  } else {
    std::memcpy(&n.ptr, op.values.data(), sizeof(void *));
    n.bytes = e.allocs[op.alloc].bytes;
    n.pattern = op.pattern;
    n.width = op.width;
  }
  return n;
}

// Adds `more` to the sorted set `to`.
inline void merge(std::vector<uint32_t> &to, const std::vector<uint32_t> &more) {
  for (uint32_t x : more) {
    auto it = std::lower_bound(to.begin(), to.end(), x);
    if (it == to.end() || *it != x) to.insert(it, x);
  }
}

inline bool samePart(const CollectivePart &a, const CollectivePart &b) {
  return a.kind == b.kind && a.dtype == b.dtype && a.op == b.op && a.peer == b.peer && a.count == b.count;
}

}  // namespace hj
