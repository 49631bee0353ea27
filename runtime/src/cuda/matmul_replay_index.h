// matmul_replay_index.h - which eager matmuls a CUDA context replays from a
// graph it captured: calls keyed by everything that decides their work, a
// key admitted the second time it is seen, the least recently used replay
// given back past a capacity. CUDA-free (the handles are opaque), so that
// its rules are tested on any machine; matmul_replays.h holds the graphs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "base/call_path.h"

namespace hj {

// A matmul's work: operands, bias, output and workspace addresses, shape,
// strides, dtypes, flags, alpha and beta (the site is not part of it).
struct MatmulKey {
  static constexpr int kWords = 22;
  uint64_t w[kWords] = {};
  bool operator==(const MatmulKey &o) const;
};
MatmulKey matmulKey(const MatmulCall &c);
struct MatmulKeyHash {
  size_t operator()(const MatmulKey &k) const;
};

// The default number of replays a context keeps.
constexpr size_t kDefaultMatmulReplays = 256;

// HOSTJIT_MATMUL_REPLAYS's text (NULL or empty: the default): how many
// replays a context keeps, 0 for none. Not a number: false, with `error`
// saying what was expected.
bool matmulReplayCapacity(const char *text, size_t *out, std::string *error);

class MatmulReplayIndex {
 public:
  explicit MatmulReplayIndex(size_t capacity) : capacity_(capacity) {}

  enum class Step {
    Direct,   // first sighting (or no capacity): call the library
    Capture,  // seen before without a replay: capture one and add() it
    Replay,   // *handle is its replay (0: capturing it failed; call the library)
  };
  // What to do for the call with key k (a replay found becomes the most
  // recently used).
  Step find(const MatmulKey &k, uintptr_t *handle);
  // Adds k's replay (0: k cannot be captured; it is not tried again). Past
  // the capacity the least recently used is dropped: its handle is returned
  // for the caller to release (0 when none was dropped).
  uintptr_t add(const MatmulKey &k, uintptr_t handle);
  // Empties the index, calling release(handle) on every non-zero handle.
  template <class Release>
  void clear(Release &&release) {
    for (const Entry &e : order_)
      if (e.handle) release(e.handle);
    order_.clear();
    byKey_.clear();
    seen_.clear();
  }
  size_t size() const { return order_.size(); }
  size_t capacity() const { return capacity_; }

 private:
  struct Entry {
    MatmulKey key;
    uintptr_t handle;
  };
  size_t capacity_;
  std::list<Entry> order_;  // most recently used first
  std::unordered_map<MatmulKey, std::list<Entry>::iterator, MatmulKeyHash> byKey_;
  std::unordered_set<MatmulKey, MatmulKeyHash> seen_;  // seen once; bounded, forgotten when full
};

}  // namespace hj
