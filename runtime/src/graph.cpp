// graph.cpp - graph mode: tracing a program, its memory plan, and building,
// updating and replaying its executable graph.
#include "graph.h"

#include <algorithm>
#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "calls.h"
#include "context.h"
#include "error.h"

namespace hj {

namespace {

constexpr size_t kAlign = 256;

// A source address no buffer has: the nodes' values must be patched.
const void *const kUnknown = reinterpret_cast<const void *>(~uintptr_t{0});

// Bytes a planned buffer takes: aligned, and never 0, so that two live
// buffers never share an address.
size_t footprint(uint64_t bytes) { return std::max<size_t>((bytes + kAlign - 1) / kAlign * kAlign, kAlign); }

// The addresses handed out while tracing: never dereferenced and never a
// real buffer (non-canonical on x86-64 and AArch64).
void *fakeAddress(size_t index) {
  return reinterpret_cast<void *>(uintptr_t{0xF00D} << 48 | (static_cast<uintptr_t>(index) + 1) << 8);
}

uint32_t cacheCapacity(const hj_options &o) {
  if (o.graph_cache) return o.graph_cache;
  if (const char *v = std::getenv("HOSTJIT_GRAPH_CACHE"); v && *v) {
    long n = std::strtol(v, nullptr, 10);
    if (n > 0 && n < (1L << 20)) return static_cast<uint32_t>(n);
  }
  return 16;
}

// Two buffers may share memory when their lifetimes do not overlap and the
// graph orders every use of one before every use of the other: both are
// used on one stream only, the same (its nodes form a chain).
bool conflict(const PlannedAlloc &a, const PlannedAlloc &b) {
  if (a.stream != b.stream || a.otherStreams || b.otherStreams) return true;
  return a.firstEvent <= b.lastEvent && b.firstEvent <= a.lastEvent;
}

// Gives each of `which` an offset: the lowest at which it overlaps no buffer
// placed before it whose lifetime overlaps its own; the largest go first.
// Returns the bytes the buffers span.
size_t place(std::vector<PlannedAlloc> &allocs, const std::vector<uint32_t> &which) {
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

GraphNode nodeOf(const GraphEntry &e, const PlannedOp &op, Comm *comm) {
  GraphNode n;
  n.kind = op.kind;
  n.deps = op.deps.data();
  n.numDeps = static_cast<uint32_t>(op.deps.size());
  if (op.kind == GraphNode::Kind::Collective) {
    n.comm = comm;
    n.parts = op.parts.data();
    n.numParts = static_cast<uint32_t>(op.parts.size());
    n.buffers = reinterpret_cast<void *const *>(op.values.data());
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
void merge(std::vector<uint32_t> &to, const std::vector<uint32_t> &more) {
  for (uint32_t x : more) {
    auto it = std::lower_bound(to.begin(), to.end(), x);
    if (it == to.end() || *it != x) to.insert(it, x);
  }
}

bool samePart(const CollectivePart &a, const CollectivePart &b) {
  return a.kind == b.kind && a.dtype == b.dtype && a.op == b.op && a.peer == b.peer && a.count == b.count;
}

}  // namespace

GraphCache::GraphCache(hj_context &ctx) : ctx_(ctx) {}

GraphCache::~GraphCache() { clear(); }

void GraphCache::clear() {
  while (!entries_.empty()) erase(entries_.begin()->second.get());
  mode_ = Mode::Off;
  cur_ = nullptr;
}

int32_t GraphCache::checkZero(bool *isZero) {
  for (auto &kv : entries_) {
    const GraphEntry &e = *kv.second;
    if (e.zeroedBytes == 0 || !e.block) continue;
    if (int32_t st = ctx_.backend->synchronize()) return st;
    std::vector<unsigned char> host(e.zeroedBytes);
    if (int32_t st = ctx_.backend->copyToHost(host.data(), static_cast<char *>(e.block) + e.zeroedOffset, host.size()))
      return st;
    for (unsigned char c : host)
      if (c) {
        *isZero = false;
        return HJ_OK;
      }
  }
  return HJ_OK;
}

void GraphCache::abandon() {
  for (void *p : fastOut_)
    if (p)
      if (Block *b = ctx_.live.erase(p)) releaseBlock(&ctx_, b);
  fastOut_.clear();
  if (mode_ == Mode::Replay) freeOutputs();
  outputs_.clear();
  traced_.clear();
  if (cur_) erase(cur_);  // made again by the next call
  cur_ = nullptr;
  mode_ = Mode::Off;
  mismatched_ = false;
}

void GraphCache::forget(std::string_view prefix) {
  std::vector<GraphEntry *> doomed;
  for (auto &kv : entries_)
    if (kv.first.substr(0, prefix.size()) == prefix && kv.second.get() != cur_) doomed.push_back(kv.second.get());
  for (GraphEntry *e : doomed) erase(e);
}

GraphEntry *GraphCache::insert(std::string_view key) {
  uint32_t capacity = cacheCapacity(ctx_.options);
  while (entries_.size() >= capacity) {
    GraphEntry *oldest = nullptr;
    for (auto &kv : entries_)
      if (!oldest || kv.second->lastUse < oldest->lastUse) oldest = kv.second.get();
    erase(oldest);
    ++ctx_.stats.graph_evictions;
  }
  auto e = std::make_unique<GraphEntry>();
  e->key.assign(key.data(), key.size());
  e->lastUse = ++tick_;
  GraphEntry *raw = e.get();
  entries_.emplace(std::string_view(raw->key), std::move(e));
  return raw;
}

void GraphCache::erase(GraphEntry *e) {
  auto it = entries_.find(std::string_view(e->key));
  HJ_INVARIANT(it != entries_.end() && it->second.get() == e);
  std::unique_ptr<GraphEntry> owned = std::move(it->second);
  entries_.erase(it);
  owned->exec.reset();
  if (owned->block) {
    ctx_.memory.release(owned->block, owned->blockBytes);
    ctx_.stats.graph_bytes -= owned->blockBytes;
  }
}

int32_t GraphCache::mismatch(const char *fmt, ...) {
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

int32_t GraphCache::insideGroup(const char *what) {
  return fail(HJ_ERR_INVALID_ARGUMENT,
              "graph mode: %s inside a send/receive group (between its GROUP_BEGIN and GROUP_END); a group node holds "
              "only its sends and receives",
              what);
}

int32_t GraphCache::placeOp(GraphEntry &e, uint32_t index) {
  if (group_ >= 0) return insideGroup(e.ops[index].kind == GraphNode::Kind::Kernel ? "a launch" : "a memset or fill");
  PlannedOp &op = e.ops[index];
  std::vector<uint32_t> &f = frontier_[stream_];
  if (mode_ == Mode::Trace) {
    op.stream = stream_;
    op.deps = f;
  } else if (op.stream != stream_ || op.deps != f) {
    return mismatch("operation %u is on stream %u after other operations than when it was traced", index + 1,
                    stream_);
  }
  f.assign(1, index);
  return HJ_OK;
}

void GraphCache::traceUse(const void *ptr) {
  auto it = traced_.find(ptr);
  if (it == traced_.end()) {
    if (cur_) cur_->unknownUse = true;  // a view, say: no buffer shares memory
    return;
  }
  cur_->allocs[it->second].otherStreams = true;
}

int32_t GraphCache::setStream(uint32_t stream) {
  if (group_ >= 0 && stream != stream_) return insideGroup("a change of stream");
  stream_ = stream;
  if (frontier_.size() <= stream) frontier_.resize(stream + 1, synced_);
  if (stream != 0 && cur_) cur_->streams = true;
  return HJ_OK;
}

int32_t GraphCache::event(uint32_t event, bool wait) {
  if (group_ >= 0) return insideGroup(wait ? "a wait for an event" : "an event record");
  if (eventDeps_.size() <= event) eventDeps_.resize(event + 1);
  if (wait)
    merge(frontier_[stream_], eventDeps_[event]);
  else
    eventDeps_[event] = frontier_[stream_];
  return HJ_OK;
}

int32_t GraphCache::streamSync() {
  if (group_ >= 0) return insideGroup("a stream sync");
  std::vector<uint32_t> done = frontier_[stream_];
  merge(synced_, done);
  for (std::vector<uint32_t> &f : frontier_) merge(f, done);
  return HJ_OK;
}

int32_t GraphCache::collective(uint32_t kind, const void *src, void *dst, uint64_t count, uint32_t dtype, uint32_t op,
                               int32_t peer, const std::string &what, uint64_t bytes) {
  GraphEntry &e = *cur_;
  bool begin = kind == HJ_COLL_GROUP_BEGIN, end = kind == HJ_COLL_GROUP_END;
  CollectivePart part;
  part.kind = kind;
  part.dtype = dtype;
  part.op = op;
  part.peer = peer;
  part.count = count;
  unsigned char addresses[2 * sizeof(void *)];
  std::memcpy(addresses, &src, sizeof src);
  std::memcpy(addresses + sizeof src, &dst, sizeof dst);
  if (mode_ == Mode::Trace) {
    part.what = what;
    uint32_t index;
    if (group_ >= 0) {
      index = static_cast<uint32_t>(group_);
    } else {
      index = static_cast<uint32_t>(e.ops.size());
      e.ops.emplace_back().kind = GraphNode::Kind::Collective;
      afterCollectives(index);
      placeOp(e, index);
      ++event_;
      if (begin) group_ = static_cast<int32_t>(index);
    }
    PlannedOp &o = e.ops[index];
    o.parts.push_back(std::move(part));
    o.values.insert(o.values.end(), addresses, addresses + sizeof addresses);
  } else {
    uint32_t index;
    if (group_ >= 0) {
      index = static_cast<uint32_t>(group_);
    } else {
      if (opAt_ >= e.ops.size())
        return mismatch("%s is operation %zu; there were %zu", what.c_str(), opAt_ + 1, e.ops.size());
      index = static_cast<uint32_t>(opAt_);
      partAt_ = 0;
    }
    PlannedOp &o = e.ops[index];
    if (o.kind != GraphNode::Kind::Collective || partAt_ >= o.parts.size() || !samePart(o.parts[partAt_], part))
      return mismatch("%s, operation %u, is another call than the one traced", what.c_str(), index + 1);
    if (group_ < 0) {
      afterCollectives(index);
      if (int32_t st = placeOp(e, index)) return st;
      ++opAt_;
      if (begin) group_ = static_cast<int32_t>(index);
    }
    markDirty(e, index, addresses, partAt_ * sizeof addresses, sizeof addresses);
    ++partAt_;
    if (end && groupDepth_ == 1 && partAt_ != o.parts.size())
      return mismatch("%s ends a group of %u calls; the traced one had %zu", what.c_str(), partAt_, o.parts.size());
  }
  if (begin) ++groupDepth_;
  if (end && groupDepth_ > 0 && --groupDepth_ == 0) group_ = -1;
  if (mode_ == Mode::Trace && !begin && !end) {
    ++e.collectives;
    e.collectiveBytes += bytes;
  }
  return HJ_OK;
}

void GraphCache::afterCollectives(uint32_t index) {
  if (lastCollective_ >= 0) merge(frontier_[stream_], {static_cast<uint32_t>(lastCollective_)});
  lastCollective_ = static_cast<int32_t>(index);
}

void GraphCache::dropCommunicating() {
  std::vector<GraphEntry *> doomed;
  for (auto &kv : entries_)
    if (kv.second->collectives) {
      if (kv.second.get() == cur_)
        kv.second->exec.reset();  // built again by its next replay
      else
        doomed.push_back(kv.second.get());
    }
  for (GraphEntry *e : doomed) erase(e);
}

int32_t GraphCache::abortComm(GraphEntry &e, int32_t status) {
  if (status == HJ_OK || !ctx_.comm || e.collectives == 0) return status;
  std::string why = hj_last_error();
  dropCommunicating();  // e among them: not used after this
  ctx_.comm->abort(why);
  ctx_.comm->closeGroups();
  return fail(status, "%s", why.c_str());
}

void GraphCache::resetStreams() {
  stream_ = 0;
  frontier_.assign(1, {});
  synced_.clear();
  eventDeps_.clear();
  group_ = lastCollective_ = -1;
  groupDepth_ = partAt_ = 0;
}

void GraphCache::startReplay() {
  mode_ = Mode::Replay;
  resetStreams();
  allocAt_ = opAt_ = 0;
  outputs_.clear();
  recordMark_ = ctx_.record.size();
  statsMark_ = ctx_.stats;
  mismatched_ = false;
}

int32_t GraphCache::call(const void *key, uint64_t keyBytes, void *const *inputs, uint32_t numInputs, bool fast,
                         const hj_graph_value *values, uint32_t numValues, void **outData, uint32_t numOutputs,
                         int64_t *outDims, uint32_t numDims, int32_t *done) {
  *done = 0;
  if (mode_ != Mode::Off)
    return fail(HJ_ERR_INVALID_ARGUMENT,
                "hj_graph_call: a graph-mode call is already in progress on this context (hj_graph_end was not "
                "called)");
  if (!key || keyBytes == 0) return fail(HJ_ERR_INVALID_ARGUMENT, "hj_graph_call: the key is empty");
  if (numInputs && !inputs) return fail(HJ_ERR_INVALID_ARGUMENT, "hj_graph_call: inputs is NULL");
  if (numValues && !values) return fail(HJ_ERR_INVALID_ARGUMENT, "hj_graph_call: values is NULL");
  if (int32_t st = ctx_.backend->checkFault()) return st;
  reason_.clear();
  inputs_.assign(inputs, inputs + numInputs);
  numOutputs_ = numOutputs;
  numDims_ = numDims;
  fast_ = fast;
  if (ctx_.sync) {
    reason_ = "the context synchronises after every launch (hj_options.sync, HOSTJIT_SYNC), which a graph cannot";
    mode_ = Mode::Eager;
    ++ctx_.stats.graph_fallbacks;
    return HJ_OK;
  }
  auto it = entries_.find(std::string_view(static_cast<const char *>(key), keyBytes));
  if (it == entries_.end()) {
    cur_ = insert(std::string_view(static_cast<const char *>(key), keyBytes));
    values_.assign(values, values + numValues);
    mode_ = Mode::Trace;
    resetStreams();
    event_ = 0;
    liveBytes_ = 0;
    traced_.clear();
    return HJ_OK;
  }
  GraphEntry &e = *it->second;
  e.lastUse = ++tick_;
  if (!e.eagerReason.empty()) {
    reason_ = e.eagerReason;
    mode_ = Mode::Eager;
    ++ctx_.stats.graph_fallbacks;
    return HJ_OK;
  }
  if (e.exec && e.fast && fast && !ctx_.recording && numValues == e.valuePatches.size()) {
    *done = 1;
    return fastReplay(e, inputs, values, outData, outDims);
  }
  values_.assign(values, values + numValues);
  cur_ = &e;
  startReplay();
  return HJ_OK;
}

int32_t GraphCache::end(int32_t status, void **outData, int64_t *outDims, int32_t *again) {
  *again = 0;
  switch (mode_) {
    case Mode::Off: return fail(HJ_ERR_INVALID_ARGUMENT, "hj_graph_end: no graph-mode call is in progress");
    case Mode::Eager:
      mode_ = Mode::Off;
      cur_ = nullptr;
      return status;
    case Mode::Trace: {
      mode_ = Mode::Off;
      traced_.clear();
      GraphEntry *e = cur_;
      cur_ = nullptr;
      if (status != HJ_OK) {
        erase(e);
        return status;
      }
      if (int32_t st = plan(*e)) {
        erase(e);
        return st;
      }
      cur_ = e;
      startReplay();
      *again = 1;
      return HJ_OK;
    }
    case Mode::Replay: break;
  }
  GraphEntry &e = *cur_;
  if (status == HJ_OK && !mismatched_ && (allocAt_ != e.allocs.size() || opAt_ != e.ops.size()))
    mismatch("the program made %zu of %zu allocations and %zu of %zu operations", allocAt_, e.allocs.size(), opAt_,
             e.ops.size());
  // A returned buffer must not be the plan's memory (one the traced call
  // freed): the caller would own what the next replay overwrites.
  for (uint32_t k = 0; status == HJ_OK && !mismatched_ && outData && k < numOutputs_; ++k)
    if (Block *b = outData[k] ? ctx_.live.find(outData[k]) : nullptr; b && b->planned >= 0)
      mismatch("output %u is buffer %%%s, which the traced call freed", k + 1, b->name);
  if (status == HJ_OK && mismatched_) {
    // The program returned: release its outputs, the plan's memory among them.
    for (uint32_t j = 0; outData && j < numOutputs_; ++j)
      if (Block *o = outData[j] ? ctx_.live.find(outData[j]) : nullptr; o && o->planned >= 0) {
        ctx_.live.erase(outData[j]);
        releaseBlock(&ctx_, o);
      }
    freeOutputs();
    status = HJ_ERR_INTERNAL;
  }
  if (mismatched_) {
    // Nothing reached the device; the program has released its buffers.
    // Forget what this run recorded and counted, and run it eagerly.
    ctx_.record.resize(recordMark_);
    ctx_.stats.allocs = statsMark_.allocs;
    ctx_.stats.frees = statsMark_.frees;
    ctx_.stats.memsets = statsMark_.memsets;
    ctx_.stats.fills = statsMark_.fills;
    ctx_.stats.launches = statsMark_.launches;
    ctx_.stats.collectives = statsMark_.collectives;
    ctx_.stats.collective_bytes = statsMark_.collective_bytes;
    mismatched_ = false;
    e.eagerReason = reason_;
    e.exec.reset();
    if (e.block) {
      ctx_.memory.release(e.block, e.blockBytes);
      ctx_.stats.graph_bytes -= e.blockBytes;
      e.block = nullptr;
    }
    e.allocs.clear();
    e.ops.clear();
    e.patches.clear();
    e.dirty.clear();
    e.sourceValue.clear();
    e.blockBytes = e.zeroedOffset = e.zeroedBytes = 0;
    outputs_.clear();
    mode_ = Mode::Eager;
    ++ctx_.stats.graph_fallbacks;
    *again = 1;
    return HJ_OK;
  }
  mode_ = Mode::Off;
  cur_ = nullptr;
  if (status != HJ_OK) {  // the program failed and released its buffers
    forgetSources(e);
    outputs_.clear();
    return status;
  }
  int32_t st = finishReplay(e, outData, outDims);
  outputs_.clear();
  return st;
}

int32_t GraphCache::plan(GraphEntry &e) {
  std::vector<uint32_t> general, zeroed;
  for (uint32_t i = 0; i < e.allocs.size(); ++i) {
    PlannedAlloc &a = e.allocs[i];
    if (a.output) continue;
    // Nodes of different streams may run at once, in any order (conflict()).
    if (e.streams && e.unknownUse) a.lastEvent = SIZE_MAX;
    (a.zeroed ? zeroed : general).push_back(i);
    ++e.fastAllocs;
    if (a.op >= 0) ++(e.ops[a.op].kind == GraphNode::Kind::Memset ? e.fastMemsets : e.fastFills);
  }
  size_t generalBytes = place(e.allocs, general);
  size_t zeroedBytes = place(e.allocs, zeroed);
  for (uint32_t i : zeroed) e.allocs[i].offset += generalBytes;
  e.zeroedOffset = generalBytes;
  e.zeroedBytes = zeroedBytes;
  e.blockBytes = generalBytes + zeroedBytes;
  for (const PlannedOp &op : e.ops)
    if (op.kind == GraphNode::Kind::Kernel) {
      ++e.launches;
      if (!e.keepAlive) e.keepAlive = op.table->keepAlive;
    }
  e.dirty.reserve(e.ops.size());  // markDirty then never allocates
  if (e.blockBytes == 0) return HJ_OK;
  if (int32_t st = ctx_.memory.allocate(e.blockBytes, &e.block)) {
    e.block = nullptr;
    if (st == HJ_ERR_INJECTED) return st;
    std::string why = hj_last_error();
    return fail(st, "graph mode: the memory plan of %zu intermediates (%zu bytes): %s",
                general.size() + zeroed.size(), e.blockBytes, why.c_str());
  }
  ctx_.stats.graph_bytes += e.blockBytes;
  if (zeroedBytes) {
    // resets_to_zero buffers: zeroed once here, left zero by their kernels.
    int32_t st = ctx_.injector.check("zeroing the memory plan of a graph (%zu bytes)", zeroedBytes);
    if (st == HJ_OK) st = ctx_.backend->memsetZero(static_cast<char *>(e.block) + generalBytes, zeroedBytes);
    if (st) return st;
    ++ctx_.stats.memsets;  // like the arena's growth; not recorded: the program did not call it
  }
  return HJ_OK;
}

int32_t GraphCache::alloc(const int64_t *sizes, const int64_t *strides, uint32_t rank, uint32_t dtype, uint32_t flags,
                          uint64_t bytes, const char *name, void **out) {
  GraphEntry &e = *cur_;
  if (mode_ == Mode::Trace) {
    PlannedAlloc a;
    a.sizes.assign(sizes, sizes + rank);
    if (strides) a.strides.assign(strides, strides + rank);
    a.dtype = dtype;
    a.flags = flags;
    a.bytes = bytes;
    a.name = name;
    a.output = flags & HJ_ALLOC_OUTPUT;
    bool zero = flags & HJ_ALLOC_ZERO_INIT;
    a.zeroed = zero && !a.output && ((flags & HJ_ALLOC_RESETS_TO_ZERO) || ctx_.reuseZeroed);
    a.firstEvent = event_++;
    a.stream = stream_;
    uint32_t index = static_cast<uint32_t>(e.allocs.size());
    if (bytes && ((zero && !a.zeroed) || (!zero && ctx_.fillNan))) {
      PlannedOp &op = e.ops.emplace_back();
      op.kind = zero ? GraphNode::Kind::Memset : GraphNode::Kind::Fill;
      op.alloc = index;
      if (!zero) {
        op.pattern = nanPattern(dtype);
        op.width = hj_dtype_size(dtype);
      }
      op.values.assign(sizeof(void *), 0);
      a.op = static_cast<int32_t>(e.ops.size() - 1);
      if (int32_t st = placeOp(e, static_cast<uint32_t>(a.op))) return st;
    }
    e.allocs.push_back(std::move(a));
    liveBytes_ += bytes;
    e.peakBytes = std::max(e.peakBytes, liveBytes_);
    void *p = fakeAddress(index);
    traced_[p] = index;
    *out = p;
    return HJ_OK;
  }
  if (allocAt_ >= e.allocs.size())
    return mismatch("buffer %%%s is allocation %zu; there were %zu", name, allocAt_ + 1, e.allocs.size());
  const PlannedAlloc &a = e.allocs[allocAt_];
  bool same = a.sizes.size() == rank && std::equal(a.sizes.begin(), a.sizes.end(), sizes) && a.dtype == dtype &&
              a.flags == flags && (strides ? a.strides.size() == rank && std::equal(a.strides.begin(), a.strides.end(), strides)
                                           : a.strides.empty());
  if (!same) return mismatch("buffer %%%s, allocation %zu, has other extents, strides, dtype or flags", name, allocAt_ + 1);
  if (a.op >= 0 && static_cast<size_t>(a.op) != opAt_)
    return mismatch("buffer %%%s is initialised at another point", name);
  if (a.op >= 0)
    if (int32_t st = placeOp(e, static_cast<uint32_t>(a.op))) return st;
  uint32_t index = static_cast<uint32_t>(allocAt_);
  Block *b = nullptr;
  if (a.output) {
    if (int32_t st = allocBlock(&ctx_, bytes, flags, dtype, name, /*deferInit=*/true, &b)) return st;
    try {
      outputs_.emplace_back(index, b->ptr);
    } catch (...) {
      ctx_.live.erase(b->ptr);
      releaseBlock(&ctx_, b);
      throw;
    }
  } else {
    if (ctx_.live.find(static_cast<char *>(e.block) + a.offset))
      return mismatch("buffer %%%s would share memory with a buffer still live: the frees moved", name);
    if (int32_t st = allocBlock(&ctx_, bytes, flags, dtype, name, /*deferInit=*/true, &b,
                                static_cast<char *>(e.block) + a.offset, static_cast<int32_t>(index)))
      return st;
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
  auto it = traced_.find(ptr);
  if (it == traced_.end()) {
    if (onError) return HJ_OK;
    return fail(HJ_ERR_INVALID_ARGUMENT, "hj_free: %p is not a live buffer of this context", ptr);
  }
  PlannedAlloc &a = cur_->allocs[it->second];
  traced_.erase(it);
  a.lastEvent = event_++;
  // An allocation that may be returned (HJ_ALLOC_OUTPUT: a loop's ping-pong
  // buffers) but that this signature frees is an intermediate of its plan.
  a.output = false;
  liveBytes_ -= a.bytes;
  ++cur_->frees;
  return HJ_OK;
}

void GraphCache::releasePlanned(Block *b) {
  if (mode_ != Mode::Replay || !cur_ || static_cast<size_t>(b->planned) >= cur_->allocs.size()) return;
  PlannedAlloc &a = cur_->allocs[b->planned];
  std::memcpy(a.lastKernel, b->lastKernel, sizeof a.lastKernel);
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

void GraphCache::forgetSources(GraphEntry &e) {
  std::fill(e.sourceValue.begin(), e.sourceValue.end(), kUnknown);
}

// After a replay that ran the program: the nodes hold this call's addresses.
void GraphCache::noteSources(GraphEntry &e) {
  if (e.sourceValue.size() != inputs_.size() + outputs_.size()) return forgetSources(e);
  for (size_t i = 0; i < inputs_.size(); ++i) e.sourceValue[i] = inputs_[i];
  for (size_t j = 0; j < outputs_.size(); ++j) e.sourceValue[inputs_.size() + j] = outputs_[j].second;
}

int32_t GraphCache::launch(const hj_kernel_table *table, uint32_t kernel, const int64_t *dims, void **params) {
  GraphEntry &e = *cur_;
  const KernelEntry &k = table->kernels[kernel];
  if (mode_ == Mode::Trace) {
    PlannedOp &op = e.ops.emplace_back();
    op.kind = GraphNode::Kind::Kernel;
    op.table = table;
    op.kernel = kernel;
    std::memcpy(op.dims, dims, sizeof op.dims);
    size_t total = 0;
    for (int32_t kind : k.params) total += paramBytes(kind);
    op.values.assign(total, 0);
    op.params.resize(k.params.size());
    size_t off = 0;
    for (size_t i = 0; i < k.params.size(); ++i) {
      op.params[i] = op.values.data() + off;
      off += paramBytes(k.params[i]);
    }
    if (int32_t st = placeOp(e, static_cast<uint32_t>(e.ops.size() - 1))) return st;
    ++event_;
    return HJ_OK;
  }
  if (opAt_ >= e.ops.size()) return mismatch("launch of @%s is operation %zu; there were %zu", k.name.c_str(), opAt_ + 1, e.ops.size());
  PlannedOp &op = e.ops[opAt_];
  if (op.kind != GraphNode::Kind::Kernel || op.table != table || op.kernel != kernel ||
      std::memcmp(op.dims, dims, sizeof op.dims) != 0)
    return mismatch("launch of @%s, operation %zu, has another kernel or other dims", k.name.c_str(), opAt_ + 1);
  if (int32_t st = placeOp(e, static_cast<uint32_t>(opAt_))) return st;
  uint32_t index = static_cast<uint32_t>(opAt_++);
  size_t off = 0;
  for (size_t i = 0; i < k.params.size(); ++i) {
    size_t n = paramBytes(k.params[i]);
    markDirty(e, index, params[i], off, n);
    off += n;
  }
  return HJ_OK;
}

void GraphCache::freeOutputs() {
  for (const auto &[index, ptr] : outputs_) {
    (void)index;
    if (Block *b = ctx_.live.erase(ptr)) {
      if (ctx_.recording) record(&ctx_, HJ_REC_FREE, b, b->name);
      releaseBlock(&ctx_, b);
    }
  }
  outputs_.clear();
}

int32_t GraphCache::pushAndLaunch(GraphEntry &e) {
  if (!e.dirty.empty()) {
    if (int32_t st = ctx_.injector.check("updating %zu nodes of a graph", e.dirty.size())) return st;
    size_t done = 0;
    for (; done < e.dirty.size(); ++done) {
      PlannedOp &op = e.ops[e.dirty[done]];
      if (int32_t st = e.exec->update(e.dirty[done], nodeOf(e, op, ctx_.comm.get()))) {
        // A node the backend cannot update in place (a driver may refuse a
        // 2D memset's new destination): build the graph anew from the values.
        if (st == HJ_ERR_BACKEND && ctx_.backend->fault().empty()) {
          if (int32_t rb = build(e)) return rb;
          break;
        }
        e.dirty.erase(e.dirty.begin(), e.dirty.begin() + static_cast<std::ptrdiff_t>(done));  // the rest stay dirty
        return st;
      }
      op.dirty = false;
      ++ctx_.stats.graph_updates;
    }
    e.dirty.clear();
  }
  if (e.ops.empty()) return HJ_OK;
  if (int32_t st = ctx_.injector.check("launching a graph of %zu operations", e.ops.size())) return st;
  return e.exec->launch();
}

int32_t GraphCache::build(GraphEntry &e) {
  e.exec.reset();
  std::vector<GraphNode> nodes;
  nodes.reserve(e.ops.size());
  for (const PlannedOp &op : e.ops) nodes.push_back(nodeOf(e, op, ctx_.comm.get()));
  int32_t st = ctx_.injector.check("building a graph of %zu operations", e.ops.size());
  if (st == HJ_OK) st = ctx_.backend->buildGraph(nodes, e.exec);
  if (st != HJ_OK) {
    e.exec.reset();
    return st;
  }
  for (PlannedOp &op : e.ops) op.dirty = false;
  e.dirty.clear();
  ++ctx_.stats.graph_builds;
  return HJ_OK;
}

int32_t GraphCache::checkZeroed(GraphEntry &e) {
  if (!ctx_.checkZeroed || e.zeroedBytes == 0) return HJ_OK;
  if (int32_t st = ctx_.backend->synchronize()) return st;
  std::vector<unsigned char> host(e.zeroedBytes);
  char *zeroed = static_cast<char *>(e.block) + e.zeroedOffset;
  if (int32_t st = ctx_.backend->copyToHost(host.data(), zeroed, e.zeroedBytes)) return st;
  for (const PlannedAlloc &a : e.allocs) {
    if (!a.zeroed || a.output) continue;
    const unsigned char *p = host.data() + (a.offset - e.zeroedOffset);
    for (size_t i = 0; i < a.bytes; ++i) {
      if (p[i] == 0) continue;
      // Repair the plan's memory so later replays still start at zero.
      ctx_.backend->memsetZero(zeroed, e.zeroedBytes);
      ++ctx_.stats.memsets;
      return fail(HJ_ERR_NOT_ZEROED,
                  "HOSTJIT_CHECK_ZEROED: buffer %%%s (%s, %" PRIu64
                  " bytes, zero_init resets_to_zero) was not zero after the graph ran: byte %zu is 0x%02x; the last "
                  "kernel given it was @%s, which must leave it zero",
                  a.name.c_str(), dtypeName(a.dtype), a.bytes, i, p[i], a.lastKernel[0] ? a.lastKernel : "(none)");
    }
  }
  return HJ_OK;
}

int32_t GraphCache::finishReplay(GraphEntry &e, void **outData, int64_t *outDims) {
  if (!e.exec) {
    // The first replay: find which arguments are input or output addresses
    // (patched on fast replays), then build the graph from these values.
    auto sourceOf = [&](const void *p, uint32_t *source) {
      for (size_t j = 0; j < outputs_.size(); ++j)
        if (outputs_[j].second == p) {
          *source = static_cast<uint32_t>(inputs_.size() + j);
          return true;
        }
      for (size_t i = 0; i < inputs_.size(); ++i)
        if (inputs_[i] == p) {
          *source = static_cast<uint32_t>(i);
          return true;
        }
      return false;
    };
    e.numInputs = static_cast<uint32_t>(inputs_.size());
    e.outputAllocs.clear();
    for (const auto &out : outputs_) e.outputAllocs.push_back(out.first);
    e.patches.clear();
    for (uint32_t oi = 0; oi < e.ops.size(); ++oi) {
      PlannedOp &op = e.ops[oi];
      if (op.kind == GraphNode::Kind::Collective) {
        for (uint32_t off = 0; off < op.values.size(); off += sizeof(void *)) {
          void *p;
          std::memcpy(&p, op.values.data() + off, sizeof p);
          uint32_t source;
          if (p && sourceOf(p, &source)) e.patches.push_back({oi, off, source});
        }
        continue;
      }
      if (op.kind != GraphNode::Kind::Kernel) {
        void *dst;
        std::memcpy(&dst, op.values.data(), sizeof dst);
        uint32_t source;
        if (e.allocs[op.alloc].output && sourceOf(dst, &source)) e.patches.push_back({oi, 0, source});
        continue;
      }
      const std::vector<int32_t> &kinds = op.table->kernels[op.kernel].params;
      uint32_t off = 0;
      for (int32_t kind : kinds) {
        if (kind == HJ_PARAM_PTR || (kind & 0xff) == HJ_PARAM_TENSOR) {
          void *p;
          std::memcpy(&p, op.values.data() + off, sizeof p);
          uint32_t source;
          if (p && sourceOf(p, &source)) e.patches.push_back({oi, off, source});
        }
        off += paramBytes(kind);
      }
    }
    size_t sources = inputs_.size() + outputs_.size();
    std::stable_sort(e.patches.begin(), e.patches.end(),
                     [](const Patch &a, const Patch &b) { return a.source < b.source; });
    e.patchStart.assign(sources + 1, 0);
    for (const Patch &p : e.patches) ++e.patchStart[p.source + 1];
    for (size_t i = 0; i < sources; ++i) e.patchStart[i + 1] += e.patchStart[i];
    e.sourceValue.assign(sources, kUnknown);
    e.fast = fast_;
    e.outSource.assign(numOutputs_, 0);
    for (uint32_t k = 0; k < numOutputs_; ++k)
      if (!sourceOf(outData[k], &e.outSource[k])) e.fast = false;
    mapValues(e);
    e.outDims.assign(outDims, outDims + numDims_);
    if (int32_t st = build(e)) {
      freeOutputs();
      return abortComm(e, st);
    }
  }
  if (int32_t st = pushAndLaunch(e)) {
    forgetSources(e);
    freeOutputs();
    return abortComm(e, st);
  }
  noteSources(e);
  if (int32_t st = checkZeroed(e)) {
    freeOutputs();
    return st;
  }
  ++ctx_.stats.graph_replays;
  return HJ_OK;
}

// Where each hj_graph_value of the call goes in the nodes. The program has
// just computed those arguments itself: a value that does not match what it
// computed means the caller's values are not what the program takes, and
// replays keep running the program.
void GraphCache::mapValues(GraphEntry &e) {
  e.valuePatches.clear();
  std::vector<uint32_t> kernelOps;
  for (uint32_t i = 0; i < e.ops.size(); ++i)
    if (e.ops[i].kind == GraphNode::Kind::Kernel) kernelOps.push_back(i);
  for (const hj_graph_value &v : values_) {
    if (v.launch >= kernelOps.size()) {
      e.fast = false;
      return;
    }
    const PlannedOp &op = e.ops[kernelOps[v.launch]];
    const std::vector<int32_t> &kinds = op.table->kernels[op.kernel].params;
    if (v.param >= kinds.size() || kinds[v.param] == HJ_PARAM_PTR || (kinds[v.param] & 0xff) == HJ_PARAM_TENSOR) {
      e.fast = false;
      return;
    }
    uint32_t off = 0;
    for (uint32_t j = 0; j < v.param; ++j) off += paramBytes(kinds[j]);
    uint32_t bytes = paramBytes(kinds[v.param]);
    if (std::memcmp(op.values.data() + off, &v.bits, bytes) != 0) {
      e.fast = false;
      return;
    }
    e.valuePatches.push_back({kernelOps[v.launch], off, bytes});
  }
}

int32_t GraphCache::fastReplay(GraphEntry &e, void *const *inputs, const hj_graph_value *values, void **outData,
                               int64_t *outDims) {
  hj_stats &s = ctx_.stats;
  uint64_t liveBefore = s.live_bytes;
  fastOut_.assign(e.outputAllocs.size(), nullptr);
  auto release = [&] {
    forgetSources(e);
    for (void *p : fastOut_)
      if (p)
        if (Block *b = ctx_.live.erase(p)) releaseBlock(&ctx_, b);
  };
  for (size_t j = 0; j < e.outputAllocs.size(); ++j) {
    const PlannedAlloc &a = e.allocs[e.outputAllocs[j]];
    Block *b = nullptr;
    int32_t st = ctx_.injector.check("hj_alloc of %%%s", a.name.c_str());
    const void *was = e.sourceValue[e.numInputs + j];  // where the nodes point now
    if (st == HJ_OK)
      st = allocBlock(&ctx_, a.bytes, a.flags, a.dtype, a.name.c_str(), /*deferInit=*/true, &b, nullptr, -1,
                      was == kUnknown ? nullptr : was);
    if (st != HJ_OK) {
      release();
      return st;
    }
    fastOut_[j] = b->ptr;
  }
  // Only the sources whose address changed since the nodes were last set.
  for (uint32_t src = 0; src + 1 < e.patchStart.size(); ++src) {
    const void *v = src < e.numInputs ? inputs[src] : fastOut_[src - e.numInputs];
    if (v == e.sourceValue[src]) continue;
    for (uint32_t i = e.patchStart[src]; i < e.patchStart[src + 1]; ++i) {
      const Patch &p = e.patches[i];
      markDirty(e, p.op, &v, p.offset, sizeof v);
    }
    e.sourceValue[src] = v;
  }
  for (size_t i = 0; i < e.valuePatches.size(); ++i) {
    const Patch &p = e.valuePatches[i];
    markDirty(e, p.op, &values[i].bits, p.offset, p.source);
  }
  if (int32_t st = pushAndLaunch(e)) {
    release();
    return abortComm(e, st);
  }
  if (int32_t st = checkZeroed(e)) {
    release();
    return st;
  }
  // Count what the program's calls would have counted.
  s.allocs += e.fastAllocs;
  s.memsets += e.fastMemsets;
  s.fills += e.fastFills;
  s.frees += e.frees;
  s.launches += e.launches;
  s.collectives += e.collectives;
  s.collective_bytes += e.collectiveBytes;
  s.peak_bytes = std::max(s.peak_bytes, liveBefore + e.peakBytes);
  for (uint32_t k = 0; k < e.outSource.size(); ++k) {
    uint32_t src = e.outSource[k];
    outData[k] = src < e.numInputs ? inputs[src] : fastOut_[src - e.numInputs];
  }
  if (!e.outDims.empty()) std::memcpy(outDims, e.outDims.data(), e.outDims.size() * sizeof(int64_t));
  ++s.graph_replays;
  ++s.graph_fast;
  fastOut_.clear();  // the caller owns them now
  return HJ_OK;
}

}  // namespace hj

extern "C" {

int32_t hj_graph_call(hj_context *ctx, const void *key, uint64_t key_bytes, void *const *inputs, uint32_t num_inputs,
                      int32_t fast, const hj_graph_value *values, uint32_t num_values, void **out_data,
                      uint32_t num_outputs, int64_t *out_dims, uint32_t num_dims, int32_t *done) {
  return hj::guarded([&]() -> int32_t {
    if (int32_t st = hj::checkContext(ctx, "hj_graph_call")) return st;
    if (!done) return hj::fail(HJ_ERR_INVALID_ARGUMENT, "hj_graph_call: done is NULL");
    try {
      return ctx->graphs.call(key, key_bytes, inputs, num_inputs, fast != 0, values, num_values, out_data,
                              num_outputs, out_dims, num_dims, done);
    } catch (...) {
      ctx->graphs.abandon();
      throw;
    }
  });
}

int32_t hj_graph_end(hj_context *ctx, int32_t status, void **out_data, int64_t *out_dims, int32_t *again) {
  return hj::guarded([&]() -> int32_t {
    if (int32_t st = hj::checkContext(ctx, "hj_graph_end")) return st;
    if (!again) return hj::fail(HJ_ERR_INVALID_ARGUMENT, "hj_graph_end: again is NULL");
    try {
      return ctx->graphs.end(status, out_data, out_dims, again);
    } catch (...) {
      *again = 0;
      ctx->graphs.abandon();
      throw;
    }
  });
}

const char *hj_graph_reason(const hj_context *ctx) {
  return hj::checkContext(ctx, "hj_graph_reason") == HJ_OK ? ctx->graphs.reason().c_str() : "";
}

void hj_graph_clear(hj_context *ctx) {
  hj::guarded([&] {
    if (hj::checkContext(ctx, "hj_graph_clear") != HJ_OK) return HJ_OK;
    ctx->graphs.clear();
    return HJ_OK;
  });
}

void hj_graph_forget(hj_context *ctx, const void *prefix, uint64_t bytes) {
  hj::guarded([&] {
    if (ctx && prefix) ctx->graphs.forget(std::string_view(static_cast<const char *>(prefix), bytes));
    return HJ_OK;
  });
}

}  // extern "C"
