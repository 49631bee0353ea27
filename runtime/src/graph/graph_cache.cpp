// graph_cache.cpp - the graph cache: signatures kept and evicted, and the
// protocol of a graph-mode call (hj_graph_call, then hj_graph_end).
#include "graph/graph_cache.h"

#include <algorithm>
#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <string_view>

#include "base/dtypes.h"
#include "base/error.h"
#include "graph/graph_internal.h"
#include "graph/graph_paths.h"

namespace hj {

GraphCache::GraphCache(GraphRoom room)
    : r_(room),
      trace_(r_, signatures_, order_),
      replay_(r_, order_, reason_),
      recordedReplay_(replay_, r_.record),
      plans_(r_.backend, r_.buffers, r_.injector, r_.stats),
      worth_(room.settings.graphMinLaunches, room.settings.graphRecapturePercent),
      exec_(r_, signatures_, worth_, outcome_, [this] { dropCommunicating(); }) {}

GraphCache::~GraphCache() { clear(); }

void GraphCache::clear() {
  for (GraphEntry *e : signatures_.all()) erase(e);
  worth_.clear();
  enter(Mode::Off);
  cur_ = nullptr;
}

int32_t GraphCache::checkZero(bool *isZero) { return plans_.checkZero(isZero); }

void GraphCache::abandon() {
  exec_.abandon();
  ReplayMatcher &m = replay_.matcher();
  // A replay's outputs are freed; outside a replay they are the caller's
  // or gone (hj_graph_clear), and forgotten.
  if (mode_ == Mode::Replay)
    m.freeOutputs(programStream());
  else
    m.clearOutputs();
  m.clearMismatch();
  trace_.recorder().finish();
  if (cur_) erase(cur_);  // made again by the next call
  cur_ = nullptr;
  enter(Mode::Off);
}

void GraphCache::forget(std::string_view prefix) {
  if (prefix.size() == sizeof(uint64_t)) {  // a program going away: its call counts too
    uint64_t program;
    std::memcpy(&program, prefix.data(), sizeof program);
    worth_.forget(program);
  }
  for (GraphEntry *e : signatures_.withPrefix(prefix))
    if (e != cur_) erase(e);
  sizesChange(prefix, false);
}

void GraphCache::sizesChange(std::string_view prefix, bool on) {
  auto it = std::find(sizesChange_.begin(), sizesChange_.end(), prefix);
  if (on && it == sizesChange_.end()) sizesChange_.emplace_back(prefix);
  if (!on && it != sizesChange_.end()) sizesChange_.erase(it);
  for (GraphEntry *e : signatures_.withPrefix(prefix)) e->sizesChange = changesSizes(e->key);
}

bool GraphCache::changesSizes(std::string_view key) const {
  return std::any_of(sizesChange_.begin(), sizesChange_.end(), [&](const std::string &p) { return key.starts_with(p); });
}

GraphEntry *GraphCache::insert(std::string_view key, bool reserve) {
  uint32_t limit = r_.settings.graphProbation;
  bool back = limit > 0 && signatures_.cameBack(key);
  bool probation = limit > 0 && !reserve && !back;
  bool room = signatures_.size() < r_.settings.graphCache;
  if (probation)
    while (signatures_.onProbation() >= limit) evict(signatures_.oldestOnProbation());
  while (signatures_.size() >= r_.settings.graphCache) {
    GraphEntry *o = signatures_.oldestOnProbation();
    evict(o ? o : signatures_.oldest());
  }
  GraphEntry *e = signatures_.insert(key, probation);
  e->recurs = back && room;
  e->sizesChange = changesSizes(key);
  return e;
}

void GraphCache::evict(GraphEntry *e) {
  if (e->probation) signatures_.leavingProbation(*e);
  erase(e);
  ++r_.stats.graph_evictions;
}

void GraphCache::unbind(GraphEntry &e) {
  if (GraphShape *s = exec_.unbind(e)) plans_.release(s);
}

int32_t GraphCache::bindPlan(GraphEntry &e) {
  if (int32_t st = plans_.plan(e)) return st;
  exec_.bind(e);
  // A signature that came back will again: a graph of its own now, as a
  // cached one gets when it is called again.
  if (e.recurs && e.exec && e.exec->holder != &e) exec_.promote(e);
  return HJ_OK;
}

void GraphCache::erase(GraphEntry *e) {
  std::unique_ptr<GraphEntry> owned = signatures_.take(e);
  unbind(*owned);
  signatures_.recycle(*owned);
}

void GraphCache::dropCommunicating() {
  for (GraphEntry *e : signatures_.all()) {
    if (!e->collectives) continue;
    if (e != cur_) {
      erase(e);
    } else if (GraphExec *x = cur_->exec) {  // built again by its next replay
      exec_.dropGraph(*x);
      x->holder = nullptr;
    }
  }
}

bool GraphCache::notWorthIt(const void *key, uint64_t keyBytes, bool miss) {
  if (keyBytes < sizeof(uint64_t)) return false;
  uint64_t program;
  std::memcpy(&program, key, sizeof program);
  if (!worth_.eager(program, miss, std::string_view(static_cast<const char *>(key), keyBytes), &reason_)) return false;
  outcome_.way(CallOutcome::Way::Eager);
  return true;
}

void GraphCache::startReplay() {
  enter(Mode::Replay);
  replay_.matcher().start(*cur_);
}

int32_t GraphCache::call(const void *key, uint64_t keyBytes, void *const *inputs, uint32_t numInputs, bool fast,
                         const hj_graph_value *values, uint32_t numValues, void **outData, uint32_t numOutputs,
                         int64_t *outDims, uint32_t numDims, int32_t *done, bool reserve) {
  *done = 0;
  const char *fn = reserve ? "hj_graph_reserve" : "hj_graph_call";
  if (mode_ != Mode::Off)
    return fail(HJ_ERR_INVALID_ARGUMENT,
                "%s: a graph-mode call is already in progress on this context (hj_graph_end was not called)", fn);
  if (!key || keyBytes == 0) return fail(HJ_ERR_INVALID_ARGUMENT, "%s: the key is empty", fn);
  if (numInputs && !inputs) return fail(HJ_ERR_INVALID_ARGUMENT, "%s: inputs is NULL", fn);
  if (numValues && !values) return fail(HJ_ERR_INVALID_ARGUMENT, "%s: values is NULL", fn);
  if (int32_t st = r_.backend.checkFault()) return st;
  reason_.clear();
  outcome_.start(r_.stats);
  call_.inputs.assign(inputs, inputs + numInputs);
  call_.numOutputs = numOutputs;
  call_.numDims = numDims;
  call_.fast = fast;
  call_.reserve = reserve;
  if (r_.settings.sync) {
    reason_ = "the context synchronises after every launch (hj_options.sync, HOSTJIT_SYNC), which a graph cannot";
    if (reserve) {  // nothing to plan: the calls run eagerly
      *done = 1;
      return HJ_OK;
    }
    enter(Mode::Eager);
    ++r_.stats.graph_fallbacks;
    return HJ_OK;
  }
  std::string_view k(static_cast<const char *>(key), keyBytes);
  GraphEntry *hit = signatures_.find(k);
  if (hit && hit->probation) signatures_.graduate(*hit);  // a flag test on the replay path
  if (reserve && hit) {  // planned already, when it was first seen
    signatures_.setLast(hit);
    hit->lastUse = signatures_.tick();
    outcome_.way(CallOutcome::Way::Reserved);
    reason_ = hit->eagerReason;
    *done = 1;
    return HJ_OK;
  }
  if (!reserve && notWorthIt(key, keyBytes, !hit)) {
    ++r_.stats.graph_fallbacks;
    enter(Mode::Eager);
    return HJ_OK;
  }
  if (!hit) {
    outcome_.way(reserve ? CallOutcome::Way::Reserved : CallOutcome::Way::New);
    cur_ = insert(k, reserve);
    signatures_.setLast(cur_);
    call_.values.assign(values, values + numValues);
    enter(Mode::Trace);
    trace_.recorder().start(*cur_);
    return HJ_OK;
  }
  GraphEntry &e = *hit;
  signatures_.setLast(hit);
  e.lastUse = signatures_.tick();
  if (e.exec && e.exec->holder != &e) exec_.promote(e);
  if (!e.eagerReason.empty()) {
    reason_ = e.eagerReason;
    enter(Mode::Eager);
    ++r_.stats.graph_fallbacks;
    return HJ_OK;
  }
  // A plan that moved since this signature last ran needs the program's
  // addresses again unless the trace said where each of them goes.
  bool placed = e.epoch == e.shape->epoch || e.innerKnown;
  if (e.resolved && e.fast && fast && placed && !r_.record.on() && numValues == e.valuePatches.size()) {
    *done = 1;
    outcome_.way(CallOutcome::Way::Fast);
    return exec_.fastReplay(e, inputs, values, outData, outDims);
  }
  outcome_.way(CallOutcome::Way::Replay);
  outcome_.ranBecause(r_.record.on()                               ? "the call is recorded"
                      : !placed                                    ? "its memory plan moved"
                      : !e.resolved                                ? "its graph is not yet built"
                      : !fast || numValues != e.valuePatches.size() ? "the caller gave no kernel arguments for this call"
                                                                   : "a kernel argument depends on more than the key");
  call_.values.assign(values, values + numValues);
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
      TraceRecorder &recorder = trace_.recorder();
      recorder.finish();
      GraphEntry *e = cur_;
      cur_ = nullptr;
      if (status != HJ_OK) {
        erase(e);
        return status;
      }
      if (!recorder.uncapturable().empty()) {
        // Nothing of the trace reached the device: keep the signature, with
        // the reason, and run this call and the later ones eagerly.
        e->eagerReason = reason_ = recorder.uncapturable();
        outcome_.way(CallOutcome::Way::Eager);
        e->allocs.clear();
        e->ops.clear();
        e->libraryCalls = e->launches = e->collectives = 0;
        if (call_.reserve) return reserved(outData);
        cur_ = e;
        enter(Mode::Eager);
        ++r_.stats.graph_fallbacks;
        *again = 1;
        return HJ_OK;
      }
      recorder.settle(*e);
      if (e->key.size() >= sizeof(uint64_t)) {
        uint64_t program;
        std::memcpy(&program, e->key.data(), sizeof program);
        worth_.traced(program, e->launches + e->libraryCalls + e->collectives);
      }
      if (int32_t st = bindPlan(*e)) {
        erase(e);
        return st;
      }
      // A reservation keeps the signature and its plan: its first call
      // runs the program against the plan and builds its graph.
      if (call_.reserve) return reserved(outData);
      // The trace holds this call's every value: unless the call is
      // recorded or its zeroed memory checked (which the program's calls
      // against the plan do), the graph is set from it and launched now.
      bool resolved = exec_.resolve(*e, call_, outData, outDims);
      if (resolved && !r_.record.on() && !r_.settings.checkZeroed)
        return exec_.fastReplay(*e, call_.inputs.data(), call_.values.data(), outData, outDims, /*first=*/true);
      outcome_.ranBecause(r_.record.on()             ? "the call is recorded"
                          : r_.settings.checkZeroed ? "zeroed memory is checked"
                                                    : "an address of the trace is no input's and no buffer's");
      cur_ = e;
      startReplay();
      *again = 1;
      return HJ_OK;
    }
    case Mode::Replay: break;
  }
  GraphEntry &e = *cur_;
  ReplayMatcher &m = replay_.matcher();
  if (status == HJ_OK) m.checkComplete();
  // A returned buffer must not be the plan's memory (one the traced call
  // freed): the caller would own what the next replay overwrites.
  for (uint32_t k = 0; status == HJ_OK && !m.mismatched() && outData && k < call_.numOutputs; ++k)
    if (Block *b = outData[k] ? r_.buffers.find(outData[k]) : nullptr; b && b->planned >= 0)
      m.mismatch("output %u is buffer %%%s, which the traced call freed", k + 1, b->name);
  if (status == HJ_OK && m.mismatched()) {
    // The program returned: release its outputs, the plan's memory among them.
    for (uint32_t j = 0; outData && j < call_.numOutputs; ++j)
      if (Block *o = outData[j] ? r_.buffers.find(outData[j]) : nullptr; o && o->planned >= 0) {
        r_.buffers.take(outData[j]);
        r_.buffers.release(o);
      }
    m.freeOutputs(programStream());
    status = HJ_ERR_INTERNAL;
  }
  if (m.mismatched()) {
    // Nothing reached the device; the program has released its buffers.
    // Forget what this run recorded and counted, and run it eagerly.
    m.undo();
    e.eagerReason = reason_;
    outcome_.way(CallOutcome::Way::Eager);
    unbind(e);
    e.allocs.clear();
    e.ops.clear();
    e.patches.clear();
    e.inner.clear();
    e.dirty.clear();
    e.sourceValue.clear();
    m.clearOutputs();
    enter(Mode::Eager);
    ++r_.stats.graph_fallbacks;
    *again = 1;
    return HJ_OK;
  }
  enter(Mode::Off);
  cur_ = nullptr;
  if (status != HJ_OK) {  // the program failed and released its buffers
    GraphExecutor::forgetSources(e);
    m.clearOutputs();
    return status;
  }
  int32_t st = exec_.finishReplay(e, call_, m, outData, outDims);
  m.clearOutputs();
  return st;
}

int32_t GraphCache::reserved(void **outData) {
  call_.reserve = false;
  outcome_.way(CallOutcome::Way::Reserved);
  for (uint32_t k = 0; outData && k < call_.numOutputs; ++k) outData[k] = nullptr;  // the trace's were fake
  return HJ_OK;
}

const std::string &GraphCache::outcome() const {
  const GraphEntry *e = lastPlanned();
  return outcome_.text(r_.stats, reason_, e ? static_cast<int64_t>(e->shape->blockBytes) : -1);
}

void GraphCache::enter(Mode mode) {
  mode_ = mode;
  if (mode == Mode::Replay)
    r_.path = r_.record.on() ? static_cast<CallPath *>(&recordedReplay_) : &replay_;
  else
    r_.path = mode == Mode::Trace ? &trace_ : r_.outside;
}

}  // namespace hj
