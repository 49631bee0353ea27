// signature_cache.h - graph mode's signatures: their entries by key, the
// last call's entry (compared first), the ticks that order evictions, and
// the operations and allocations of evicted entries, which new traces reuse
// so that a program whose signature changes on every call traces without
// allocating. New signatures start on probation: those seen once (a decode
// loop's lengths, each called once) leave first, so that signatures that
// come back stay cached however many one-off ones pass. Free of the
// backend: letting go of an entry's graph and plan is the graph cache's
// (GraphCache::erase).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "graph/graph_entry.h"
#include "graph/key_hashes.h"

namespace hj {

class SignatureCache {
 public:
  // The entry of `key`: the last call's when the keys are equal (a model
  // called again and again compares its key, kilobytes for hundreds of
  // weights, instead of hashing it), else the map's; NULL when not cached.
  GraphEntry *find(std::string_view key) const;
  // A new entry for `key`, used now, on probation or not. The caller
  // evicts first (oldestOnProbation(), oldest()).
  GraphEntry *insert(std::string_view key, bool probation);
  // `e`, called again, leaves probation.
  void graduate(GraphEntry &e);
  // Remembers that `e`, on probation, was evicted (the last 4096 such keys,
  // by hash), for cameBack.
  void leavingProbation(const GraphEntry &e);
  // Whether `key` was evicted from probation before (then forgotten).
  bool cameBack(std::string_view key);
  // Takes `e` out of the cache (no longer the last call's either); the
  // caller lets go of its graph and plan, then recycle()s it.
  std::unique_ptr<GraphEntry> take(GraphEntry *e);
  // Keeps the entry's operations and allocations (up to 4096 of each) for
  // newOp and newAlloc.
  void recycle(GraphEntry &e);
  // A new operation or allocation at the end of a trace: a kept one when
  // there is one (its buffers reused), reset, else a new one.
  PlannedOp &newOp(GraphEntry &e);
  PlannedAlloc &newAlloc(GraphEntry &e);

  // The entry used longest ago, NULL when there is none.
  GraphEntry *oldest() const;
  // The entry on probation made longest ago, NULL when there is none.
  GraphEntry *oldestOnProbation() const { return probation_.empty() ? nullptr : probation_.front(); }
  size_t size() const { return entries_.size(); }
  size_t onProbation() const { return probation_.size(); }
  // Every entry, and those whose key starts with `prefix` (a program's).
  std::vector<GraphEntry *> all() const;
  std::vector<GraphEntry *> withPrefix(std::string_view prefix) const;

  // The last call's entry, or NULL.
  GraphEntry *last() const { return last_; }
  void setLast(GraphEntry *e) { last_ = e; }
  // A use now: entries and executable graphs order their uses by it.
  uint64_t tick() { return ++tick_; }

 private:
  std::unordered_map<std::string_view, std::unique_ptr<GraphEntry>> entries_;  // keys: the entries' own
  GraphEntry *last_ = nullptr;
  uint64_t tick_ = 0;
  std::deque<GraphEntry *> probation_;  // entries on probation, oldest first
  KeyHashes leftProbation_;             // keys evicted from probation
  std::vector<PlannedOp> spareOps_;
  std::vector<PlannedAlloc> spareAllocs_;
};

}  // namespace hj
