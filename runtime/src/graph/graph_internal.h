// graph_internal.h - what graph mode's files share: the memory plan's
// alignment and placement, fake trace addresses, nodes made from planned
// operations, an operation's values set (and listed dirty), a buffer asked
// of the pool for a graph.
#pragma once

#include <algorithm>
#include <cstring>
#include <vector>

#include "backend/backend.h"
#include "base/fake_address.h"
#include "graph/graph_entry.h"
#include "memory/buffers.h"

namespace hj {

inline constexpr size_t kAlign = 256;

// The device memory an executable graph is taken to hold per node, for
// Settings::graphMemory: an H200 held 145 KiB per instantiated graph of 16
// kernel nodes (scripts/gpu/graph_update_probe.cu).
inline constexpr uint64_t kNodeBytes = 9 * 1024;
// Graphs of their own that signatures coming back get while their shape of
// work has a graph taking its updates at launch. The K = 16 shape cycle on
// an H200 (bench/RESULTS.md, 2026-12-03) replayed 16 or 64 signatures in
// 2.9 and 3.2 us from graphs of their own against 4.0 and 5.7 us from the
// shared graph, and 256 or 1000 in 6.9 and 5.4 us against 4.2 and 4.9 us,
// each own graph holding about 145 KiB of device memory.
inline constexpr size_t kOwnGraphsBesideDeviceUpdates = 64;

// A source address no buffer has: the nodes' values must be patched.
inline const void *const kUnknown = reinterpret_cast<const void *>(~uintptr_t{0});

// Bytes a planned buffer takes: aligned, and never 0, so that two live
// buffers never share an address.
inline size_t footprint(uint64_t bytes) { return std::max<size_t>((bytes + kAlign - 1) / kAlign * kAlign, kAlign); }

// The bytes of a planned buffer's slot: its footprint rounded up to a power
// of two, so that the same shape of work with somewhat larger sizes fits
// the same plan (at most twice the footprint).
inline size_t slotBytes(uint64_t bytes) {
  size_t want = footprint(bytes), slot = kAlign;
  while (slot < want) slot <<= 1;
  return slot;
}

// Two buffers may share memory when their lifetimes do not overlap and the
// graph orders every use of one before every use of the other: both are
// used on one stream only, the same (its nodes form a chain).
inline bool conflict(const PlannedAlloc &a, const PlannedAlloc &b) {
  if (a.stream != b.stream || a.otherStreams || b.otherStreams) return true;
  return a.firstEvent <= b.lastEvent && b.firstEvent <= a.lastEvent;
}

// Gives each of `which` an offset (offset[i], from `base`) for its slot of
// size[i] bytes: the lowest at which it overlaps no slot placed before it
// whose lifetime overlaps its own; the largest go first. Returns the bytes
// the slots span.
inline size_t place(const std::vector<PlannedAlloc> &allocs, const std::vector<uint32_t> &which,
                    const std::vector<size_t> &size, std::vector<size_t> &offset, size_t base) {
  std::vector<uint32_t> order = which;
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return size[a] > size[b]; });
  std::vector<uint32_t> placed;
  std::vector<std::pair<size_t, size_t>> busy;
  size_t total = 0;
  for (uint32_t i : order) {
    busy.clear();
    for (uint32_t j : placed)
      if (conflict(allocs[i], allocs[j])) busy.emplace_back(offset[j] - base, offset[j] - base + size[j]);
    std::sort(busy.begin(), busy.end());
    size_t off = 0;
    for (const auto &[lo, hi] : busy) {
      if (off + size[i] <= lo) break;
      off = std::max(off, hi);
    }
    offset[i] = base + off;
    total = std::max(total, off + size[i]);
    placed.push_back(i);
  }
  return total;
}

inline GraphNode nodeOf(const PlannedOp &op, Comm *comm) {
  GraphNode n;
  n.stream = op.stream;
  n.deps = op.deps.data();
  n.numDeps = static_cast<uint32_t>(op.deps.size());
  void *const *buffers = reinterpret_cast<void *const *>(op.values.data());
  void **params = const_cast<void **>(op.params.data());
  void *destination = nullptr;
  if (op.values.size() >= sizeof destination) std::memcpy(&destination, op.values.data(), sizeof destination);
  n.op = std::visit(
      Overloaded{[&](const PlannedMemset &m) -> GraphOp { return MemsetNode{destination, m.bytes}; },
                 [&](const PlannedFill &f) -> GraphOp { return FillNode{destination, f.bytes, f.pattern, f.width}; },
                 [&](const PlannedKernel &k) -> GraphOp {
                   return KernelNode{&k.table->kernels[k.kernel],
                                     {uint32_t(k.dims[0]), uint32_t(k.dims[1]), uint32_t(k.dims[2])},
                                     {uint32_t(k.dims[3]), uint32_t(k.dims[4]), uint32_t(k.dims[5])},
                                     uint32_t(k.dims[6]), params};
                 },
                 [&](const PlannedCollective &c) -> GraphOp {
                   return CollectiveNode{comm, c.parts.data(), static_cast<uint32_t>(c.parts.size()), buffers};
                 },
                 [&](const PlannedLibrary &l) -> GraphOp { return LibraryNode{&l.matmul, buffers}; },
                 [&](const PlannedCustom &c) -> GraphOp {
                   return CustomNode{&c.table->kernels[c.kernel], params, c.site.c_str()};
                 }},
      op.work);
  return n;
}

// Calls fn(offset) for each address in an operation's values: a kernel's or
// custom call's pointer and tensor arguments, a memset's or fill's
// destination, a collective's or library call's buffers.
template <class Fn>
void forEachAddress(const PlannedOp &op, Fn &&fn) {
  auto each = [&](auto &&) {
    for (uint32_t off = 0; off < op.values.size(); off += sizeof(void *)) fn(off);
  };
  auto arguments = [&](const KernelEntry &k) {
    uint32_t off = 0;
    for (int32_t kind : k.params) {
      if (kind == HJ_PARAM_PTR || (kind & 0xff) == HJ_PARAM_TENSOR) fn(off);
      off += paramBytes(kind);
    }
  };
  std::visit(Overloaded{[&](const PlannedCollective &c) { each(c); }, [&](const PlannedLibrary &l) { each(l); },
                        [&](const PlannedMemset &) { fn(0u); }, [&](const PlannedFill &) { fn(0u); },
                        [&](const PlannedKernel &k) { arguments(k.table->kernels[k.kernel]); },
                        [&](const PlannedCustom &c) { arguments(c.table->kernels[c.kernel]); }},
             op.work);
}

inline void *addressAt(const PlannedOp &op, uint32_t offset) {
  void *p;
  std::memcpy(&p, op.values.data() + offset, sizeof p);
  return p;
}

// Groups the entry's patches by source (`sources` of them: its inputs,
// then its outputs) and marks every source's address unknown, so that the
// next fast replay writes each.
inline void indexPatches(GraphEntry &e, size_t sources) {
  std::stable_sort(e.patches.begin(), e.patches.end(), [](const Patch &a, const Patch &b) { return a.source < b.source; });
  e.patchStart.assign(sources + 1, 0);
  for (const Patch &p : e.patches) ++e.patchStart[p.source + 1];
  for (size_t i = 0; i < sources; ++i) e.patchStart[i + 1] += e.patchStart[i];
  e.sourceValue.assign(sources, kUnknown);
}

// Whether node `n` of an executable graph holds what `op` needs.
// Whether op is a kernel whose launch dims differ from those node n holds.
inline bool newDims(const PlannedOp &op, const NodeState &n) {
  const auto *k = std::get_if<PlannedKernel>(&op.work);
  return k && std::memcmp(k->dims, n.dims, sizeof n.dims) != 0;
}

// A library call's sizes and strides (zeros for other operations): a
// shape of work leaves them out (memory_plans.cpp), so a node holding other
// ones must be set even where its buffers' addresses are the same.
inline void matmulSizes(const PlannedOp &op, int64_t (&out)[10]) {
  std::memset(out, 0, sizeof out);
  if (const auto *l = std::get_if<PlannedLibrary>(&op.work)) {
    const MatmulCall &m = l->matmul;
    const int64_t v[10] = {m.batch,          m.m,           m.n,           m.k,           m.batchStride[0],
                           m.batchStride[1], m.batchStride[2], m.rowStride[0], m.rowStride[1], m.rowStride[2]};
    std::memcpy(out, v, sizeof out);
  }
}

inline bool sameNode(const PlannedOp &op, const NodeState &n) {
  if (newDims(op, n) || op.bytes() != n.bytes || op.values != n.values) return false;
  if (!std::holds_alternative<PlannedLibrary>(op.work)) return true;
  int64_t sizes[10];
  matmulSizes(op, sizes);
  return std::memcmp(sizes, n.matmul, sizeof sizes) == 0;
}

inline void noteNode(const PlannedOp &op, NodeState &n) {
  if (const auto *k = std::get_if<PlannedKernel>(&op.work))
    std::memcpy(n.dims, k->dims, sizeof n.dims);
  else
    std::memset(n.dims, 0, sizeof n.dims);
  matmulSizes(op, n.matmul);
  n.bytes = op.bytes();
  n.values.assign(op.values.begin(), op.values.end());
}

// Sets `bytes` bytes at `offset` of operation `index`'s values; one that
// changes is listed dirty (its node must be set before the next launch).
inline void markDirty(GraphEntry &e, uint32_t index, const void *value, size_t offset, size_t bytes) {
  PlannedOp &op = e.ops[index];
  unsigned char *at = op.values.data() + offset;
  if (std::memcmp(at, value, bytes) == 0) return;
  std::memcpy(at, value, bytes);
  if (!op.dirty) {
    op.dirty = true;
    e.dirty.push_back(index);
  }
}

// A buffer of the program a graph-mode call allocates on `stream` (its
// zeroing or NaN fill, if any, a node of the graph).
inline BufferRequest graphRequest(uint64_t bytes, uint32_t flags, uint32_t dtype, const char *name, uint32_t stream,
                                  const void *prefer = nullptr) {
  BufferRequest r;
  r.bytes = bytes;
  r.flags = flags;
  r.dtype = dtype;
  r.name = name;
  r.recordStream = stream;
  r.deferInit = true;
  r.prefer = prefer;
  return r;
}


}  // namespace hj
