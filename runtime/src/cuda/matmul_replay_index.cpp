// matmul_replay_index.cpp - the keys and the least-recently-used index of a
// context's matmul replays.
#include "cuda/matmul_replay_index.h"

#include <cctype>
#include <cstring>

namespace hj {

namespace {

uint64_t bitsOf(double v) {
  uint64_t u;
  std::memcpy(&u, &v, sizeof u);
  return u;
}

uint64_t address(const void *p) { return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(p)); }

}  // namespace

bool MatmulKey::operator==(const MatmulKey &o) const { return std::memcmp(w, o.w, sizeof w) == 0; }

MatmulKey matmulKey(const MatmulCall &c) {
  MatmulKey k;
  const uint64_t v[MatmulKey::kWords] = {address(c.a),
                                         address(c.b),
                                         address(c.bias),
                                         address(c.c),
                                         address(c.workspace),
                                         static_cast<uint64_t>(c.batch),
                                         static_cast<uint64_t>(c.m),
                                         static_cast<uint64_t>(c.n),
                                         static_cast<uint64_t>(c.k),
                                         static_cast<uint64_t>(c.batchStride[0]),
                                         static_cast<uint64_t>(c.batchStride[1]),
                                         static_cast<uint64_t>(c.batchStride[2]),
                                         static_cast<uint64_t>(c.rowStride[0]),
                                         static_cast<uint64_t>(c.rowStride[1]),
                                         static_cast<uint64_t>(c.rowStride[2]),
                                         c.workspaceBytes,
                                         c.aType,
                                         c.cType,
                                         c.flags,
                                         bitsOf(c.alpha),
                                         bitsOf(c.beta),
                                         0};
  std::memcpy(k.w, v, sizeof v);
  return k;
}

size_t MatmulKeyHash::operator()(const MatmulKey &k) const {
  uint64_t h = 1469598103934665603ull;  // FNV-1a over the words
  for (uint64_t x : k.w) {
    h ^= x;
    h *= 1099511628211ull;
    h ^= h >> 29;
  }
  return static_cast<size_t>(h);
}

bool matmulReplayCapacity(const char *text, size_t *out, std::string *error) {
  *out = kDefaultMatmulReplays;
  if (!text || !*text) return true;
  size_t v = 0;
  const char *p = text;
  for (; *p; ++p) {
    if (!std::isdigit(static_cast<unsigned char>(*p)) || v > 1000000) break;
    v = v * 10 + static_cast<size_t>(*p - '0');
  }
  if (*p || v > 1000000) {
    *error = std::string("HOSTJIT_MATMUL_REPLAYS is \"") + text +
             "\": expected how many matmul replays a context keeps, from 0 (none) to 1000000";
    return false;
  }
  *out = v;
  return true;
}

MatmulReplayIndex::Step MatmulReplayIndex::find(const MatmulKey &k, uintptr_t *handle) {
  *handle = 0;
  if (capacity_ == 0) return Step::Direct;
  auto it = byKey_.find(k);
  if (it != byKey_.end()) {
    order_.splice(order_.begin(), order_, it->second);
    *handle = it->second->handle;
    return Step::Replay;
  }
  if (seen_.count(k)) return Step::Capture;
  // One-off calls (a new address every call) must not grow without bound.
  if (seen_.size() >= 4 * capacity_) seen_.clear();
  seen_.insert(k);
  return Step::Direct;
}

uintptr_t MatmulReplayIndex::add(const MatmulKey &k, uintptr_t handle) {
  seen_.erase(k);
  if (capacity_ == 0) return handle;
  if (auto it = byKey_.find(k); it != byKey_.end()) {  // replaced: the old one is given back
    uintptr_t old = it->second->handle;
    it->second->handle = handle;
    order_.splice(order_.begin(), order_, it->second);
    return old;
  }
  uintptr_t dropped = 0;
  if (order_.size() >= capacity_) {
    dropped = order_.back().handle;
    byKey_.erase(order_.back().key);
    order_.pop_back();
  }
  order_.push_front(Entry{k, handle});
  byKey_[k] = order_.begin();
  return dropped;
}

}  // namespace hj
