// graph_cache.cpp - the graph cache: signatures kept and evicted, and the
// protocol of a graph-mode call (hj_graph_call, then hj_graph_end).
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

GraphCache::GraphCache(GraphRoom room)
    : r_(room), tracePath_(makeTracePath(*this, r_)), replayPath_(makeReplayPath(*this, r_)) {}

GraphCache::~GraphCache() { clear(); }

void GraphCache::clear() {
  while (!entries_.empty()) erase(entries_.begin()->second.get());
  enter(Mode::Off);
  cur_ = nullptr;
}

int32_t GraphCache::checkZero(bool *isZero) {
  for (auto &kv : entries_) {
    const GraphEntry &e = *kv.second;
    if (e.zeroedBytes == 0 || !e.block) continue;
    if (int32_t st = r_.backend.synchronize()) return st;
    std::vector<unsigned char> host(e.zeroedBytes);
    if (int32_t st = r_.backend.copyToHost(host.data(), static_cast<char *>(e.block) + e.zeroedOffset, host.size()))
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
      if (Block *b = r_.buffers.take(p)) r_.buffers.release(b);
  fastOut_.clear();
  if (mode_ == Mode::Replay) freeOutputs();
  outputs_.clear();
  traced_.clear();
  if (cur_) erase(cur_);  // made again by the next call
  cur_ = nullptr;
  enter(Mode::Off);
  mismatched_ = false;
}

void GraphCache::forget(std::string_view prefix) {
  std::vector<GraphEntry *> doomed;
  for (auto &kv : entries_)
    if (kv.first.substr(0, prefix.size()) == prefix && kv.second.get() != cur_) doomed.push_back(kv.second.get());
  for (GraphEntry *e : doomed) erase(e);
}

GraphEntry *GraphCache::insert(std::string_view key) {
  uint32_t capacity = r_.settings.graphCache;
  while (entries_.size() >= capacity) {
    GraphEntry *oldest = nullptr;
    for (auto &kv : entries_)
      if (!oldest || kv.second->lastUse < oldest->lastUse) oldest = kv.second.get();
    erase(oldest);
    ++r_.stats.graph_evictions;
  }
  auto e = std::make_unique<GraphEntry>();
  e->key.assign(key.data(), key.size());
  e->lastUse = ++tick_;
  GraphEntry *raw = e.get();
  entries_.emplace(std::string_view(raw->key), std::move(e));
  return raw;
}

void GraphCache::erase(GraphEntry *e) {
  if (last_ == e) last_ = nullptr;
  auto it = entries_.find(std::string_view(e->key));
  HJ_INVARIANT(it != entries_.end() && it->second.get() == e);
  std::unique_ptr<GraphEntry> owned = std::move(it->second);
  entries_.erase(it);
  owned->exec.reset();
  if (owned->block) {
    r_.buffers.memory().release(owned->block, owned->blockBytes);
    r_.stats.graph_bytes -= owned->blockBytes;
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
  if (status == HJ_OK || !r_.comm || e.collectives == 0) return status;
  std::string why = hj_last_error();
  dropCommunicating();  // e among them: not used after this
  r_.comm->abort(why);
  r_.comm->closeGroups();
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
  enter(Mode::Replay);
  resetStreams();
  allocAt_ = opAt_ = 0;
  outputs_.clear();
  recordMark_ = r_.record.size();
  statsMark_ = r_.stats;
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
  if (int32_t st = r_.backend.checkFault()) return st;
  reason_.clear();
  inputs_.assign(inputs, inputs + numInputs);
  numOutputs_ = numOutputs;
  numDims_ = numDims;
  fast_ = fast;
  if (r_.settings.sync) {
    reason_ = "the context synchronises after every launch (hj_options.sync, HOSTJIT_SYNC), which a graph cannot";
    enter(Mode::Eager);
    ++r_.stats.graph_fallbacks;
    return HJ_OK;
  }
  // The signature of the last call first: a model called again and again
  // with the same shapes compares its key once instead of hashing it (a
  // key holds every input's shape and strides, kilobytes for hundreds of
  // weights).
  std::string_view k(static_cast<const char *>(key), keyBytes);
  GraphEntry *hit = last_ && last_->key.size() == keyBytes && std::memcmp(last_->key.data(), key, keyBytes) == 0
                        ? last_
                        : nullptr;
  if (!hit)
    if (auto it = entries_.find(k); it != entries_.end()) hit = it->second.get();
  if (!hit) {
    cur_ = last_ = insert(k);
    values_.assign(values, values + numValues);
    enter(Mode::Trace);
    resetStreams();
    uncapturable_.clear();
    event_ = 0;
    liveBytes_ = 0;
    traced_.clear();
    return HJ_OK;
  }
  GraphEntry &e = *hit;
  last_ = hit;
  e.lastUse = ++tick_;
  if (!e.eagerReason.empty()) {
    reason_ = e.eagerReason;
    enter(Mode::Eager);
    ++r_.stats.graph_fallbacks;
    return HJ_OK;
  }
  if (e.exec && e.fast && fast && !r_.record.on() && numValues == e.valuePatches.size()) {
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
      enter(Mode::Off);
      cur_ = nullptr;
      return status;
    case Mode::Trace: {
      enter(Mode::Off);
      traced_.clear();
      GraphEntry *e = cur_;
      cur_ = nullptr;
      if (status != HJ_OK) {
        erase(e);
        return status;
      }
      if (!uncapturable_.empty()) {
        // Nothing of the trace reached the device: keep the signature, with
        // the reason, and run this call and the later ones eagerly.
        e->eagerReason = reason_ = uncapturable_;
        e->allocs.clear();
        e->ops.clear();
        e->libraryCalls = e->launches = e->collectives = 0;
        cur_ = e;
        enter(Mode::Eager);
        ++r_.stats.graph_fallbacks;
        *again = 1;
        return HJ_OK;
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
    if (Block *b = outData[k] ? r_.buffers.find(outData[k]) : nullptr; b && b->planned >= 0)
      mismatch("output %u is buffer %%%s, which the traced call freed", k + 1, b->name);
  if (status == HJ_OK && mismatched_) {
    // The program returned: release its outputs, the plan's memory among them.
    for (uint32_t j = 0; outData && j < numOutputs_; ++j)
      if (Block *o = outData[j] ? r_.buffers.find(outData[j]) : nullptr; o && o->planned >= 0) {
        r_.buffers.take(outData[j]);
        r_.buffers.release(o);
      }
    freeOutputs();
    status = HJ_ERR_INTERNAL;
  }
  if (mismatched_) {
    // Nothing reached the device; the program has released its buffers.
    // Forget what this run recorded and counted, and run it eagerly.
    r_.record.truncate(recordMark_);
    r_.stats.allocs = statsMark_.allocs;
    r_.stats.frees = statsMark_.frees;
    r_.stats.memsets = statsMark_.memsets;
    r_.stats.fills = statsMark_.fills;
    r_.stats.launches = statsMark_.launches;
    r_.stats.collectives = statsMark_.collectives;
    r_.stats.collective_bytes = statsMark_.collective_bytes;
    r_.stats.library_calls = statsMark_.library_calls;
    mismatched_ = false;
    e.eagerReason = reason_;
    e.exec.reset();
    if (e.block) {
      r_.buffers.memory().release(e.block, e.blockBytes);
      r_.stats.graph_bytes -= e.blockBytes;
      e.block = nullptr;
    }
    e.allocs.clear();
    e.ops.clear();
    e.patches.clear();
    e.dirty.clear();
    e.sourceValue.clear();
    e.blockBytes = e.zeroedOffset = e.zeroedBytes = 0;
    outputs_.clear();
    enter(Mode::Eager);
    ++r_.stats.graph_fallbacks;
    *again = 1;
    return HJ_OK;
  }
  enter(Mode::Off);
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

uint32_t GraphCache::programStream() const {
  return mode_ == Mode::Trace || mode_ == Mode::Replay ? stream_ : r_.backend.currentStream();
}

BufferRequest GraphCache::request(uint64_t bytes, uint32_t flags, uint32_t dtype, const char *name,
                                  const void *prefer) const {
  BufferRequest r;
  r.bytes = bytes;
  r.flags = flags;
  r.dtype = dtype;
  r.name = name;
  r.recordStream = programStream();
  r.deferInit = true;  // a memset or fill node of the graph
  r.prefer = prefer;
  return r;
}

void GraphCache::enter(Mode mode) {
  mode_ = mode;
  r_.path = mode == Mode::Trace ? tracePath_.get() : mode == Mode::Replay ? replayPath_.get() : &r_.eager;
}

}  // namespace hj
