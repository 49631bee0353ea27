// replay_matcher.cpp - a signature's runtime calls against its plan,
// compared with its trace.
#include "graph/replay_matcher.h"

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstring>

#include "base/error.h"
#include "graph/graph_internal.h"
#include "graph/op_values.h"

namespace hj {

void ReplayMatcher::start(GraphEntry &e) {
  e_ = &e;
  order_.reset();
  allocAt_ = opAt_ = 0;
  partAt_ = 0;
  outputs_.clear();
  recordMark_ = record_.size();
  statsMark_ = stats_;
  mismatched_ = false;
}

int32_t ReplayMatcher::mismatch(const char *fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  reason_ = std::string("the program's runtime calls differ from those its graph was built from (") + buf +
            "): the key given to hj_graph_call does not cover everything they depend on";
  mismatched_ = true;
  return fail(HJ_ERR_INTERNAL, "graph mode: %s", reason_.c_str());
}

void ReplayMatcher::checkComplete() {
  if (!mismatched_ && (allocAt_ != e_->allocs.size() || opAt_ != e_->ops.size()))
    mismatch("the program made %zu of %zu allocations and %zu of %zu operations", allocAt_, e_->allocs.size(), opAt_,
             e_->ops.size());
}

void ReplayMatcher::undo() {
  record_.truncate(recordMark_);
  stats_.allocs = statsMark_.allocs;
  stats_.frees = statsMark_.frees;
  stats_.memsets = statsMark_.memsets;
  stats_.fills = statsMark_.fills;
  stats_.launches = statsMark_.launches;
  stats_.collectives = statsMark_.collectives;
  stats_.collective_bytes = statsMark_.collective_bytes;
  stats_.library_calls = statsMark_.library_calls;
  mismatched_ = false;
}

void ReplayMatcher::freeOutputs(uint32_t stream) {
  for (const auto &[index, ptr] : outputs_) {
    (void)index;
    if (Block *b = buffers_.take(ptr)) buffers_.freeLive(b, stream);
  }
  outputs_.clear();
}

int32_t ReplayMatcher::place(uint32_t index) {
  const PlannedOp &op = e_->ops[index];
  if (int32_t st = order_.outsideGroup(op)) return st;
  if (op.stream != order_.stream() || op.deps != order_.ops().frontier())
    return mismatch("operation %u is on stream %u after other operations than when it was traced", index + 1,
                    order_.stream());
  order_.placed(index);
  return HJ_OK;
}

int32_t ReplayMatcher::collective(const CollectiveCall &c) {
  const std::string &what = *c.what;
  GraphEntry &e = *e_;
  bool begin = c.kind == HJ_COLL_GROUP_BEGIN, end = c.kind == HJ_COLL_GROUP_END;
  unsigned char addresses[2 * sizeof(void *)];
  CollectivePart part = partOf(c, addresses);
  uint32_t index;
  if (order_.group() >= 0) {
    index = static_cast<uint32_t>(order_.group());
  } else {
    if (opAt_ >= e.ops.size())
      return mismatch("%s is operation %zu; there were %zu", what.c_str(), opAt_ + 1, e.ops.size());
    index = static_cast<uint32_t>(opAt_);
    partAt_ = 0;
  }
  const auto *traced = std::get_if<PlannedCollective>(&e.ops[index].work);
  if (!traced || partAt_ >= traced->parts.size() || !sameValues(traced->parts[partAt_], part))
    return mismatch("%s, operation %u, is another call than the one traced", what.c_str(), index + 1);
  if (order_.group() < 0) {
    order_.ops().collective(index);
    if (int32_t st = place(index)) return st;
    ++opAt_;
    if (begin) order_.openGroup(index);
  }
  markDirty(e, index, addresses, partAt_ * sizeof addresses, sizeof addresses);
  ++partAt_;
  if (end && order_.depth() == 1 && partAt_ != traced->parts.size())
    return mismatch("%s ends a group of %u calls; the traced one had %zu", what.c_str(), partAt_,
                    traced->parts.size());
  order_.bracket(c.kind);
  return HJ_OK;
}

int32_t ReplayMatcher::matmul(const MatmulCall &c) {
  if (int32_t st = order_.outsideGroup("a matmul")) return st;
  GraphEntry &e = *e_;
  const void *ptrs[5] = {c.a, c.b, c.c, c.bias, c.workspace};
  if (opAt_ >= e.ops.size()) return mismatch("matmul (%s) is operation %zu; there were %zu", c.site, opAt_ + 1, e.ops.size());
  const auto *traced = std::get_if<PlannedLibrary>(&e.ops[opAt_].work);
  if (!traced || !sameValues(traced->matmul, c)) return mismatch("matmul (%s), operation %zu, is another multiply than the one traced", c.site, opAt_ + 1);
  if (int32_t st = place(static_cast<uint32_t>(opAt_))) return st;
  markDirty(e, static_cast<uint32_t>(opAt_++), ptrs, 0, sizeof ptrs);
  return HJ_OK;
}

int32_t ReplayMatcher::alloc(const AllocCall &c, void **out) {
  GraphEntry &e = *e_;
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
    if (int32_t st = place(static_cast<uint32_t>(a.op))) return st;
  uint32_t index = static_cast<uint32_t>(allocAt_);
  Block *b = nullptr;
  if (a.output) {
    if (int32_t st = buffers_.allocate(graphRequest(c.bytes, c.flags, c.dtype, c.name, order_.stream()), &b)) return st;
    try {
      outputs_.emplace_back(index, b->ptr);
    } catch (...) {
      buffers_.take(b->ptr);
      buffers_.release(b);
      throw;
    }
  } else {
    char *at = static_cast<char *>(e.shape->block) + e.shape->offset[index];
    if (buffers_.find(at))
      return mismatch("buffer %%%s would share memory with a buffer still live: the frees moved", c.name);
    BufferRequest r = graphRequest(c.bytes, c.flags, c.dtype, c.name, order_.stream());
    r.at = at;
    r.planned = static_cast<int32_t>(index);
    if (int32_t st = buffers_.allocate(r, &b)) return st;
  }
  ++allocAt_;
  if (a.op >= 0) {
    ++opAt_;
    markDirty(e, static_cast<uint32_t>(a.op), &b->ptr, 0, sizeof(void *));
  }
  *out = b->ptr;
  return HJ_OK;
}

int32_t ReplayMatcher::free(void *ptr, bool onError) {
  if (Block *b = buffers_.find(ptr); b && b->planned >= 0 && e_ && static_cast<size_t>(b->planned) < e_->allocs.size())
    std::memcpy(e_->allocs[b->planned].lastKernel, b->lastKernel, sizeof b->lastKernel);
  return buffers_.free(ptr, onError, order_.stream());
}

int32_t ReplayMatcher::customCall(const CustomCall &c) {
  if (int32_t st = order_.outsideGroup("a custom call")) return st;
  return launch(c.table, c.callee, kNoDims, c.params, GraphOpKind::Custom);
}

int32_t ReplayMatcher::launch(const hj_kernel_table *table, uint32_t kernel, const int64_t *programDims, void **params,
                              GraphOpKind kind) {
  GraphEntry &e = *e_;
  const KernelEntry &k = table->kernels[kernel];
  int64_t rounded[7];
  const int64_t *dims = nodeDims(kind, k, programDims, rounded);
  if (opAt_ >= e.ops.size())
    return mismatch("%s of @%s is operation %zu; there were %zu", kind == GraphOpKind::Custom ? "call" : "launch",
                    k.name.c_str(), opAt_ + 1, e.ops.size());
  const PlannedOp &op = e.ops[opAt_];
  bool same = std::visit(Overloaded{[&](const PlannedKernel &t) {
                                      return kind == GraphOpKind::Kernel && t.table == table && t.kernel == kernel &&
                                             std::memcmp(t.dims, dims, sizeof t.dims) == 0;
                                    },
                                    [&](const PlannedCustom &t) {
                                      return kind == GraphOpKind::Custom && t.table == table && t.kernel == kernel;
                                    },
                                    [](const auto &) { return false; }},
                         op.work);
  if (!same)
    return mismatch("%s of @%s, operation %zu, has another %s", kind == GraphOpKind::Custom ? "call" : "launch",
                    k.name.c_str(), opAt_ + 1, kind == GraphOpKind::Custom ? "callee" : "kernel or other dims");
  if (int32_t st = place(static_cast<uint32_t>(opAt_))) return st;
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
