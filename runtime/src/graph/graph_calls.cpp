// graph_calls.cpp - the runtime calls of a program in graph mode: traced
// (learned) or replayed (compared with what was traced, placed as nodes).
#include "graph/graph_cache.h"

#include <algorithm>
#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <cstring>

#include "base/dtypes.h"
#include "base/error.h"
#include "graph/graph_internal.h"
#include "graph/graph_paths.h"

namespace hj {

int32_t GraphCache::outsideGroup(const PlannedOp &op) {
  if (group_ < 0) return HJ_OK;
  return insideGroup(op.kind() == GraphNode::Kind::Kernel   ? "a launch"
                     : op.kind() == GraphNode::Kind::Custom ? "a custom call"
                                                            : "a memset or fill");
}

int32_t GraphCache::placeTraced(GraphEntry &e, uint32_t index) {
  PlannedOp &op = e.ops[index];
  if (int32_t st = outsideGroup(op)) return st;
  op.stream = order_.stream();
  op.deps = order_.frontier();
  order_.placed(index);
  return HJ_OK;
}

int32_t GraphCache::placeReplayed(GraphEntry &e, uint32_t index) {
  const PlannedOp &op = e.ops[index];
  if (int32_t st = outsideGroup(op)) return st;
  if (op.stream != order_.stream() || op.deps != order_.frontier())
    return mismatch("operation %u is on stream %u after other operations than when it was traced", index + 1,
                    order_.stream());
  order_.placed(index);
  return HJ_OK;
}

void GraphCache::traceUse(const void *ptr) {
  size_t index;
  if (!fakeIndex(ptr, &index) || index >= tracedLive_.size() || !tracedLive_[index]) {
    if (cur_) cur_->unknownUse = true;  // a view, say: no buffer shares memory
    return;
  }
  cur_->allocs[index].otherStreams = true;
}

int32_t GraphCache::setStream(uint32_t stream) {
  if (group_ >= 0 && stream != order_.stream()) return insideGroup("a change of stream");
  order_.setStream(stream);
  if (stream != 0 && cur_) cur_->streams = true;
  return HJ_OK;
}

int32_t GraphCache::event(uint32_t event, bool wait) {
  if (group_ >= 0) return insideGroup(wait ? "a wait for an event" : "an event record");
  order_.event(event, wait);
  return HJ_OK;
}

int32_t GraphCache::streamSync() {
  if (group_ >= 0) return insideGroup("a stream sync");
  order_.streamSync();
  return HJ_OK;
}

namespace {

// A collective call as one part of its node, and its source and
// destination addresses (the node's values).
CollectivePart partOf(const CollectiveCall &c, unsigned char (&addresses)[2 * sizeof(void *)]) {
  CollectivePart part;
  part.kind = c.kind;
  part.dtype = c.dtype;
  part.op = c.op;
  part.peer = c.peer;
  part.count = c.count;
  const void *src = c.src;
  void *dst = c.dst;
  std::memcpy(addresses, &src, sizeof src);
  std::memcpy(addresses + sizeof src, &dst, sizeof dst);
  return part;
}

}  // namespace

void GraphCache::groupDepth(uint32_t kind) {
  if (kind == HJ_COLL_GROUP_BEGIN) ++groupDepth_;
  if (kind == HJ_COLL_GROUP_END && groupDepth_ > 0 && --groupDepth_ == 0) group_ = -1;
}

int32_t GraphCache::traceCollective(const CollectiveCall &c) {
  GraphEntry &e = *cur_;
  bool begin = c.kind == HJ_COLL_GROUP_BEGIN, end = c.kind == HJ_COLL_GROUP_END;
  unsigned char addresses[2 * sizeof(void *)];
  CollectivePart part = partOf(c, addresses);
  part.what = *c.what;
  uint32_t index;
  if (group_ >= 0) {
    index = static_cast<uint32_t>(group_);
  } else {
    index = static_cast<uint32_t>(e.ops.size());
    signatures_.newOp(e).work = PlannedCollective{};
    order_.collective(index);
    placeTraced(e, index);
    ++event_;
    if (begin) group_ = static_cast<int32_t>(index);
  }
  PlannedOp &o = e.ops[index];
  std::get<PlannedCollective>(o.work).parts.push_back(std::move(part));
  o.values.insert(o.values.end(), addresses, addresses + sizeof addresses);
  groupDepth(c.kind);
  if (!begin && !end) {
    ++e.collectives;
    e.collectiveBytes += c.bytes;
  }
  return HJ_OK;
}

int32_t GraphCache::replayCollective(const CollectiveCall &c) {
  const std::string &what = *c.what;
  GraphEntry &e = *cur_;
  bool begin = c.kind == HJ_COLL_GROUP_BEGIN, end = c.kind == HJ_COLL_GROUP_END;
  unsigned char addresses[2 * sizeof(void *)];
  CollectivePart part = partOf(c, addresses);
  uint32_t index;
  if (group_ >= 0) {
    index = static_cast<uint32_t>(group_);
  } else {
    if (opAt_ >= e.ops.size())
      return mismatch("%s is operation %zu; there were %zu", what.c_str(), opAt_ + 1, e.ops.size());
    index = static_cast<uint32_t>(opAt_);
    partAt_ = 0;
  }
  const auto *traced = std::get_if<PlannedCollective>(&e.ops[index].work);
  if (!traced || partAt_ >= traced->parts.size() || !samePart(traced->parts[partAt_], part))
    return mismatch("%s, operation %u, is another call than the one traced", what.c_str(), index + 1);
  if (group_ < 0) {
    order_.collective(index);
    if (int32_t st = placeReplayed(e, index)) return st;
    ++opAt_;
    if (begin) group_ = static_cast<int32_t>(index);
  }
  markDirty(e, index, addresses, partAt_ * sizeof addresses, sizeof addresses);
  ++partAt_;
  if (end && groupDepth_ == 1 && partAt_ != traced->parts.size())
    return mismatch("%s ends a group of %u calls; the traced one had %zu", what.c_str(), partAt_,
                    traced->parts.size());
  groupDepth(c.kind);
  return HJ_OK;
}

int32_t GraphCache::traceMatmul(const MatmulCall &c) {
  if (group_ >= 0) return insideGroup("a matmul");
  GraphEntry &e = *cur_;
  const void *ptrs[5] = {c.a, c.b, c.c, c.bias, c.workspace};
  PlannedOp &op = signatures_.newOp(e);
  op.work = PlannedLibrary{c};
  op.values.assign(reinterpret_cast<const unsigned char *>(ptrs), reinterpret_cast<const unsigned char *>(ptrs) + sizeof ptrs);
  if (int32_t st = placeTraced(e, static_cast<uint32_t>(e.ops.size() - 1))) return st;
  ++event_;
  return HJ_OK;
}

int32_t GraphCache::replayMatmul(const MatmulCall &c) {
  if (group_ >= 0) return insideGroup("a matmul");
  GraphEntry &e = *cur_;
  const void *ptrs[5] = {c.a, c.b, c.c, c.bias, c.workspace};
  if (opAt_ >= e.ops.size()) return mismatch("matmul (%s) is operation %zu; there were %zu", c.site, opAt_ + 1, e.ops.size());
  const auto *traced = std::get_if<PlannedLibrary>(&e.ops[opAt_].work);
  const MatmulCall &t = traced ? traced->matmul : c;
  bool same = traced && t.batch == c.batch && t.m == c.m && t.n == c.n && t.k == c.k &&
              std::memcmp(t.batchStride, c.batchStride, sizeof t.batchStride) == 0 &&
              std::memcmp(t.rowStride, c.rowStride, sizeof t.rowStride) == 0 && t.workspaceBytes == c.workspaceBytes &&
              t.aType == c.aType && t.cType == c.cType && t.flags == c.flags && t.alpha == c.alpha && t.beta == c.beta;
  if (!same) return mismatch("matmul (%s), operation %zu, is another multiply than the one traced", c.site, opAt_ + 1);
  if (int32_t st = placeReplayed(e, static_cast<uint32_t>(opAt_))) return st;
  markDirty(e, static_cast<uint32_t>(opAt_++), ptrs, 0, sizeof ptrs);
  return HJ_OK;
}

int32_t GraphCache::traceAlloc(const AllocCall &c, void **out) {
  GraphEntry &e = *cur_;
  if (e.allocs.size() >= kFakeAllocs || c.bytes >= kFakeSpan)
    return fail(HJ_ERR_INVALID_ARGUMENT,
                "hj_alloc of %%%s: graph mode traces at most %zu allocations of less than 64 GiB each, and this "
                "is allocation %zu, of %llu bytes; run the program without graph mode",
                c.name, kFakeAllocs, e.allocs.size() + 1, static_cast<unsigned long long>(c.bytes));
  uint32_t index = static_cast<uint32_t>(e.allocs.size());
  PlannedAlloc &a = signatures_.newAlloc(e);
  a.sizes.assign(c.sizes, c.sizes + c.rank);
  if (c.strides) a.strides.assign(c.strides, c.strides + c.rank);
  a.dtype = c.dtype;
  a.flags = c.flags;
  a.bytes = c.bytes;
  a.name = c.name;
  a.output = c.flags & HJ_ALLOC_OUTPUT;
  bool zero = c.flags & HJ_ALLOC_ZERO_INIT;
  a.zeroed = fromZeroedArena(c.flags, r_.settings);
  a.firstEvent = event_++;
  a.stream = order_.stream();
  void *p = fakeAddress(index);
  if (c.bytes && ((zero && !a.zeroed) || (!zero && r_.settings.fillNan))) {
    PlannedOp &op = signatures_.newOp(e);
    if (zero)
      op.work = PlannedMemset{index, c.bytes};
    else
      op.work = PlannedFill{index, c.bytes, nanPattern(c.dtype), hj_dtype_size(c.dtype)};
    op.values.assign(reinterpret_cast<const unsigned char *>(&p), reinterpret_cast<const unsigned char *>(&p) + sizeof p);
    a.op = static_cast<int32_t>(e.ops.size() - 1);
    if (int32_t st = placeTraced(e, static_cast<uint32_t>(a.op))) return st;
  }
  liveBytes_ += c.bytes;
  e.peakBytes = std::max(e.peakBytes, liveBytes_);
  tracedLive_.push_back(1);
  *out = p;
  return HJ_OK;
}

int32_t GraphCache::replayAlloc(const AllocCall &c, void **out) {
  GraphEntry &e = *cur_;
  if (allocAt_ >= e.allocs.size())
    return mismatch("buffer %%%s is allocation %zu; there were %zu", c.name, allocAt_ + 1, e.allocs.size());
  const PlannedAlloc &a = e.allocs[allocAt_];
  bool sameStrides = c.strides ? a.strides.size() == c.rank && std::equal(a.strides.begin(), a.strides.end(), c.strides)
                               : a.strides.empty();
  bool same = a.sizes.size() == c.rank && std::equal(a.sizes.begin(), a.sizes.end(), c.sizes) && a.dtype == c.dtype &&
              a.flags == c.flags && sameStrides;
  if (!same)
    return mismatch("buffer %%%s, allocation %zu, has other extents, strides, dtype or flags", c.name, allocAt_ + 1);
  if (a.op >= 0 && static_cast<size_t>(a.op) != opAt_)
    return mismatch("buffer %%%s is initialised at another point", c.name);
  if (a.op >= 0)
    if (int32_t st = placeReplayed(e, static_cast<uint32_t>(a.op))) return st;
  uint32_t index = static_cast<uint32_t>(allocAt_);
  Block *b = nullptr;
  if (a.output) {
    if (int32_t st = r_.buffers.allocate(request(c.bytes, c.flags, c.dtype, c.name), &b)) return st;
    try {
      outputs_.emplace_back(index, b->ptr);
    } catch (...) {
      r_.buffers.take(b->ptr);
      r_.buffers.release(b);
      throw;
    }
  } else {
    char *at = static_cast<char *>(e.shape->block) + e.shape->offset[index];
    if (r_.buffers.find(at))
      return mismatch("buffer %%%s would share memory with a buffer still live: the frees moved", c.name);
    BufferRequest r = request(c.bytes, c.flags, c.dtype, c.name);
    r.at = at;
    r.planned = static_cast<int32_t>(index);
    if (int32_t st = r_.buffers.allocate(r, &b)) return st;
  }
  ++allocAt_;
  if (a.op >= 0) {
    ++opAt_;
    markDirty(e, static_cast<uint32_t>(a.op), &b->ptr, 0, sizeof(void *));
  }
  *out = b->ptr;
  return HJ_OK;
}

int32_t GraphCache::traceFree(void *ptr, bool onError) {
  size_t index;
  uint64_t offset = 0;
  if (!fakeIndex(ptr, &index, &offset) || offset != 0 || index >= tracedLive_.size() || !tracedLive_[index]) {
    if (onError) return HJ_OK;
    return fail(HJ_ERR_INVALID_ARGUMENT, "hj_free: %p is not a live buffer of this context", ptr);
  }
  PlannedAlloc &a = cur_->allocs[index];
  tracedLive_[index] = 0;
  a.lastEvent = event_++;
  // An allocation that may be returned (HJ_ALLOC_OUTPUT: a loop's ping-pong
  // buffers) but that this signature frees is an intermediate of its plan.
  a.output = false;
  liveBytes_ -= a.bytes;
  ++cur_->frees;
  return HJ_OK;
}

int32_t GraphCache::replayFree(void *ptr, bool onError) {
  // A planned buffer's last kernel goes to its plan (HOSTJIT_CHECK_ZEROED).
  if (Block *b = r_.buffers.find(ptr); b && b->planned >= 0 && cur_ && static_cast<size_t>(b->planned) < cur_->allocs.size())
    std::memcpy(cur_->allocs[b->planned].lastKernel, b->lastKernel, sizeof b->lastKernel);
  return r_.buffers.free(ptr, onError, programStream());
}

void GraphCache::markDirty(GraphEntry &e, uint32_t index, const void *value, size_t offset, size_t bytes) {
  PlannedOp &op = e.ops[index];
  unsigned char *at = op.values.data() + offset;
  if (std::memcmp(at, value, bytes) == 0) return;
  std::memcpy(at, value, bytes);
  if (!op.dirty) {
    op.dirty = true;
    e.dirty.push_back(index);
  }
}

namespace {
const int64_t kNoDims[7] = {};  // a custom call's: it has no launch dims
}  // namespace

int32_t GraphCache::traceCustomCall(const CustomCall &c) {
  if (group_ >= 0) return insideGroup("a custom call");
  const KernelEntry &k = c.table->kernels[c.callee];
  if (!k.capturable && uncapturable_.empty())
    uncapturable_ = "custom call @" + k.name + " (" + c.site +
                    ") may not be captured into a graph (its declaration does not say `capturable = true`)";
  if (int32_t st = traceLaunch(c.table, c.callee, kNoDims, c.params, GraphNode::Kind::Custom)) return st;
  std::get<PlannedCustom>(cur_->ops.back().work).site = c.site;
  return HJ_OK;
}

int32_t GraphCache::replayCustomCall(const CustomCall &c) {
  if (group_ >= 0) return insideGroup("a custom call");
  return replayLaunch(c.table, c.callee, kNoDims, c.params, GraphNode::Kind::Custom);
}

namespace {

// The grid a graph node of kernel k launches for `dims`: a bounds_checked
// kernel's grid rounded up to a power of two per dim (within the driver's
// limits), so that signatures whose grids round alike differ in their
// nodes' arguments only, which the driver sets for a fraction of the cost
// of a new grid (bench/RESULTS.md). The record keeps the program's dims; a
// custom call (kind Custom) has none to round.
const int64_t *nodeDims(GraphNode::Kind kind, const KernelEntry &k, const int64_t *dims, int64_t *rounded) {
  if (kind != GraphNode::Kind::Kernel || !(k.launchFlags & HJ_LAUNCH_BOUNDS_CHECKED)) return dims;
  std::memcpy(rounded, dims, 7 * sizeof(int64_t));
  for (int d = 0; d < 3; ++d) {
    int64_t limit = d == 0 ? INT32_MAX : 65535, g = 1;
    while (g < dims[d]) g *= 2;
    if (g <= limit) rounded[d] = g;
  }
  return rounded;
}

}  // namespace

int32_t GraphCache::traceLaunch(const hj_kernel_table *table, uint32_t kernel, const int64_t *programDims,
                                void **params, GraphNode::Kind kind) {
  GraphEntry &e = *cur_;
  const KernelEntry &k = table->kernels[kernel];
  int64_t rounded[7];
  const int64_t *dims = nodeDims(kind, k, programDims, rounded);
  PlannedOp &op = signatures_.newOp(e);
  if (kind == GraphNode::Kind::Custom) {
    op.work = PlannedCustom{table, kernel, std::string()};
  } else {
    PlannedKernel pk{table, kernel, {}};
    std::memcpy(pk.dims, dims, sizeof pk.dims);
    op.work = pk;
  }
  size_t total = 0;
  for (int32_t kind : k.params) total += paramBytes(kind);
  op.values.assign(total, 0);
  op.params.resize(k.params.size());
  size_t off = 0;
  for (size_t i = 0; i < k.params.size(); ++i) {
    op.params[i] = op.values.data() + off;
    std::memcpy(op.params[i], params[i], paramBytes(k.params[i]));
    off += paramBytes(k.params[i]);
  }
  if (int32_t st = placeTraced(e, static_cast<uint32_t>(e.ops.size() - 1))) return st;
  ++event_;
  return HJ_OK;
}

int32_t GraphCache::replayLaunch(const hj_kernel_table *table, uint32_t kernel, const int64_t *programDims,
                                 void **params, GraphNode::Kind kind) {
  GraphEntry &e = *cur_;
  const KernelEntry &k = table->kernels[kernel];
  int64_t rounded[7];
  const int64_t *dims = nodeDims(kind, k, programDims, rounded);
  if (opAt_ >= e.ops.size())
    return mismatch("%s of @%s is operation %zu; there were %zu", kind == GraphNode::Kind::Custom ? "call" : "launch",
                    k.name.c_str(), opAt_ + 1, e.ops.size());
  const PlannedOp &op = e.ops[opAt_];
  bool same = std::visit(Overloaded{[&](const PlannedKernel &t) {
                                      return kind == GraphNode::Kind::Kernel && t.table == table && t.kernel == kernel &&
                                             std::memcmp(t.dims, dims, sizeof t.dims) == 0;
                                    },
                                    [&](const PlannedCustom &t) {
                                      return kind == GraphNode::Kind::Custom && t.table == table && t.kernel == kernel;
                                    },
                                    [](const auto &) { return false; }},
                         op.work);
  if (!same)
    return mismatch("%s of @%s, operation %zu, has another %s", kind == GraphNode::Kind::Custom ? "call" : "launch",
                    k.name.c_str(), opAt_ + 1, kind == GraphNode::Kind::Custom ? "callee" : "kernel or other dims");
  if (int32_t st = placeReplayed(e, static_cast<uint32_t>(opAt_))) return st;
  uint32_t index = static_cast<uint32_t>(opAt_++);
  size_t off = 0;
  for (size_t i = 0; i < k.params.size(); ++i) {
    size_t n = paramBytes(k.params[i]);
    markDirty(e, index, params[i], off, n);
    off += n;
  }
  return HJ_OK;
}

}  // namespace hj
