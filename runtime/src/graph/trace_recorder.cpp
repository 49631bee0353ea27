// trace_recorder.cpp - a new signature's runtime calls, written into its
// graph-mode entry.
#include "graph/trace_recorder.h"

#include <algorithm>
#include <cstring>

#include "base/dtypes.h"
#include "base/error.h"
#include "base/fake_address.h"
#include "graph/op_values.h"

namespace hj {

void TraceRecorder::start(GraphEntry &e) {
  e_ = &e;
  e.ops.reserve(lastOps_);  // the last trace's counts, often this one's
  e.allocs.reserve(lastAllocs_);
  order_.reset();
  uncapturable_.clear();
  event_ = 0;
  liveBytes_ = 0;
  live_.clear();
}

void TraceRecorder::finish() {
  live_.clear();
  e_ = nullptr;
}

void TraceRecorder::settle(GraphEntry &e) {
  lastOps_ = e.ops.size();
  lastAllocs_ = e.allocs.size();
  e.fastAllocs = e.fastMemsets = e.fastFills = e.launches = e.libraryCalls = 0;
  for (PlannedAlloc &a : e.allocs) {
    if (a.output) continue;
    // Nodes of different streams may run at once, in any order (conflict()).
    if (e.streams && e.unknownUse) a.lastEvent = SIZE_MAX;
    ++e.fastAllocs;
    if (a.op >= 0) ++(e.ops[a.op].kind() == GraphOpKind::Memset ? e.fastMemsets : e.fastFills);
  }
  for (const PlannedOp &op : e.ops) {
    if (op.kind() == GraphOpKind::Library || op.kind() == GraphOpKind::Custom) ++e.libraryCalls;
    if (op.kind() == GraphOpKind::Kernel) ++e.launches;
  }
  e.dirty.reserve(e.ops.size());  // markDirty then never allocates
}

int32_t TraceRecorder::place(uint32_t index) {
  PlannedOp &op = e_->ops[index];
  if (int32_t st = order_.outsideGroup(op)) return st;
  op.stream = order_.stream();
  op.deps = order_.ops().frontier();
  order_.placed(index);
  return HJ_OK;
}

void TraceRecorder::use(const void *ptr) {
  size_t index;
  if (!fakeIndex(ptr, &index) || index >= live_.size() || !live_[index]) {
    if (e_) e_->unknownUse = true;  // a view, say: no buffer shares memory
    return;
  }
  e_->allocs[index].otherStreams = true;
}

int32_t TraceRecorder::setStream(uint32_t stream) {
  if (int32_t st = order_.setStream(stream)) return st;
  if (stream != 0 && e_) e_->streams = true;
  return HJ_OK;
}

int32_t TraceRecorder::collective(const CollectiveCall &c) {
  GraphEntry &e = *e_;
  bool begin = c.kind == HJ_COLL_GROUP_BEGIN, end = c.kind == HJ_COLL_GROUP_END;
  unsigned char addresses[2 * sizeof(void *)];
  CollectivePart part = partOf(c, addresses);
  part.what = *c.what;
  uint32_t index;
  if (order_.group() >= 0) {
    index = static_cast<uint32_t>(order_.group());
  } else {
    index = static_cast<uint32_t>(e.ops.size());
    signatures_.newOp(e).work = PlannedCollective{};
    order_.ops().collective(index);
    place(index);
    ++event_;
    if (begin) order_.openGroup(index);
  }
  PlannedOp &o = e.ops[index];
  std::get<PlannedCollective>(o.work).parts.push_back(std::move(part));
  o.values.insert(o.values.end(), addresses, addresses + sizeof addresses);
  order_.bracket(c.kind);
  if (!begin && !end) {
    ++e.collectives;
    e.collectiveBytes += c.bytes;
  }
  return HJ_OK;
}

int32_t TraceRecorder::matmul(const MatmulCall &c) {
  if (int32_t st = order_.outsideGroup("a matmul")) return st;
  GraphEntry &e = *e_;
  const void *ptrs[5] = {c.a, c.b, c.c, c.bias, c.workspace};
  PlannedOp &op = signatures_.newOp(e);
  op.work = PlannedLibrary{c};
  op.values.assign(reinterpret_cast<const unsigned char *>(ptrs), reinterpret_cast<const unsigned char *>(ptrs) + sizeof ptrs);
  if (int32_t st = place(static_cast<uint32_t>(e.ops.size() - 1))) return st;
  ++event_;
  return HJ_OK;
}

int32_t TraceRecorder::alloc(const AllocCall &c, void **out) {
  GraphEntry &e = *e_;
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
  a.zeroed = fromZeroedArena(c.flags, settings_);
  a.firstEvent = event_++;
  a.stream = order_.stream();
  void *p = fakeAddress(index);
  if (c.bytes && ((zero && !a.zeroed) || (!zero && settings_.fillNan))) {
    PlannedOp &op = signatures_.newOp(e);
    if (zero)
      op.work = PlannedMemset{index, c.bytes};
    else
      op.work = PlannedFill{index, c.bytes, nanPattern(c.dtype), hj_dtype_size(c.dtype)};
    op.values.assign(reinterpret_cast<const unsigned char *>(&p), reinterpret_cast<const unsigned char *>(&p) + sizeof p);
    a.op = static_cast<int32_t>(e.ops.size() - 1);
    if (int32_t st = place(static_cast<uint32_t>(a.op))) return st;
  }
  liveBytes_ += c.bytes;
  e.peakBytes = std::max(e.peakBytes, liveBytes_);
  live_.push_back(1);
  *out = p;
  return HJ_OK;
}

int32_t TraceRecorder::free(void *ptr, bool onError) {
  size_t index;
  uint64_t offset = 0;
  if (!fakeIndex(ptr, &index, &offset) || offset != 0 || index >= live_.size() || !live_[index]) {
    if (onError) return HJ_OK;
    return fail(HJ_ERR_INVALID_ARGUMENT, "hj_free: %p is not a live buffer of this context", ptr);
  }
  PlannedAlloc &a = e_->allocs[index];
  live_[index] = 0;
  a.lastEvent = event_++;
  // An allocation that may be returned (HJ_ALLOC_OUTPUT: a loop's ping-pong
  // buffers) but that this signature frees is an intermediate of its plan.
  a.output = false;
  liveBytes_ -= a.bytes;
  ++e_->frees;
  return HJ_OK;
}

int32_t TraceRecorder::customCall(const CustomCall &c) {
  if (int32_t st = order_.outsideGroup("a custom call")) return st;
  const KernelEntry &k = c.table->kernels[c.callee];
  if (!k.capturable && uncapturable_.empty())
    uncapturable_ = "custom call @" + k.name + " (" + c.site +
                    ") may not be captured into a graph (its declaration does not say `capturable = true`)";
  if (int32_t st = launch(c.table, c.callee, kNoDims, c.params, GraphOpKind::Custom)) return st;
  std::get<PlannedCustom>(e_->ops.back().work).site = c.site;
  return HJ_OK;
}

int32_t TraceRecorder::launch(const hj_kernel_table *table, uint32_t kernel, const int64_t *programDims, void **params,
                              GraphOpKind kind) {
  GraphEntry &e = *e_;
  const KernelEntry &k = table->kernels[kernel];
  int64_t rounded[7];
  const int64_t *dims = nodeDims(kind, k, programDims, rounded);
  PlannedOp &op = signatures_.newOp(e);
  if (kind == GraphOpKind::Custom) {
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
  if (int32_t st = place(static_cast<uint32_t>(e.ops.size() - 1))) return st;
  ++event_;
  return HJ_OK;
}

}  // namespace hj
