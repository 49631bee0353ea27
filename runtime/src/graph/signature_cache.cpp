// signature_cache.cpp - graph mode's signatures by key, and the spare
// operations and allocations that new traces reuse.
#include "graph/signature_cache.h"

#include <algorithm>
#include <cstring>
#include <functional>

#include "base/error.h"

namespace hj {

namespace {

constexpr size_t kSpares = 4096;  // operations (and allocations) kept from evicted entries

}  // namespace

GraphEntry *SignatureCache::find(std::string_view key) const {
  if (last_ && last_->key.size() == key.size() && std::memcmp(last_->key.data(), key.data(), key.size()) == 0)
    return last_;
  auto it = entries_.find(key);
  return it == entries_.end() ? nullptr : it->second.get();
}

GraphEntry *SignatureCache::insert(std::string_view key, bool probation) {
  auto e = std::make_unique<GraphEntry>();
  e->key.assign(key.data(), key.size());
  e->lastUse = tick();
  e->probation = probation;
  GraphEntry *raw = e.get();
  entries_.emplace(std::string_view(raw->key), std::move(e));
  if (probation) probation_.push_back(raw);
  return raw;
}

void SignatureCache::graduate(GraphEntry &e) {
  if (!e.probation) return;
  e.probation = false;
  auto it = std::find(probation_.begin(), probation_.end(), &e);
  HJ_INVARIANT(it != probation_.end());
  probation_.erase(it);
}

void SignatureCache::leavingProbation(const GraphEntry &e) {
  leftProbation_.remember(std::hash<std::string_view>{}(e.key));
}

bool SignatureCache::cameBack(std::string_view key) { return leftProbation_.forget(std::hash<std::string_view>{}(key)); }

std::unique_ptr<GraphEntry> SignatureCache::take(GraphEntry *e) {
  if (last_ == e) last_ = nullptr;
  graduate(*e);
  auto it = entries_.find(std::string_view(e->key));
  HJ_INVARIANT(it != entries_.end() && it->second.get() == e);
  std::unique_ptr<GraphEntry> owned = std::move(it->second);
  entries_.erase(it);
  return owned;
}

void SignatureCache::recycle(GraphEntry &e) {
  for (PlannedOp &op : e.ops)
    if (spareOps_.size() < kSpares) spareOps_.push_back(std::move(op));
  for (PlannedAlloc &a : e.allocs)
    if (spareAllocs_.size() < kSpares) spareAllocs_.push_back(std::move(a));
  e.ops.clear();
  e.allocs.clear();
}

PlannedOp &SignatureCache::newOp(GraphEntry &e) {
  e.watchWhat.clear();
  if (spareOps_.empty()) return e.ops.emplace_back();
  PlannedOp &op = e.ops.emplace_back(std::move(spareOps_.back()));
  spareOps_.pop_back();
  op.work = PlannedKernel{};
  op.stream = 0;
  op.deps.clear();
  op.values.clear();
  op.params.clear();
  op.dirty = false;
  return op;
}

PlannedAlloc &SignatureCache::newAlloc(GraphEntry &e) {
  if (spareAllocs_.empty()) return e.allocs.emplace_back();
  PlannedAlloc &a = e.allocs.emplace_back(std::move(spareAllocs_.back()));
  spareAllocs_.pop_back();
  a.sizes.clear();
  a.strides.clear();
  a.dtype = a.flags = 0;
  a.bytes = 0;
  a.output = a.zeroed = a.otherStreams = false;
  a.offset = a.firstEvent = 0;
  a.lastEvent = SIZE_MAX;
  a.op = -1;
  a.name.clear();
  std::memset(a.lastKernel, 0, sizeof a.lastKernel);
  a.stream = 0;
  return a;
}

GraphEntry *SignatureCache::oldest() const {
  GraphEntry *oldest = nullptr;
  for (const auto &kv : entries_)
    if (!oldest || kv.second->lastUse < oldest->lastUse) oldest = kv.second.get();
  return oldest;
}

std::vector<GraphEntry *> SignatureCache::all() const {
  std::vector<GraphEntry *> out;
  out.reserve(entries_.size());
  for (const auto &kv : entries_) out.push_back(kv.second.get());
  return out;
}

std::vector<GraphEntry *> SignatureCache::withPrefix(std::string_view prefix) const {
  std::vector<GraphEntry *> out;
  for (const auto &kv : entries_)
    if (kv.first.substr(0, prefix.size()) == prefix) out.push_back(kv.second.get());
  return out;
}

}  // namespace hj
