// ptr_map.h - an open-addressing map from buffer pointers to their blocks.
//
// Lookups and inserts allocate nothing once the table has grown to the
// program's working set, which keeps hj_alloc/hj_free allocation-free in
// steady state (std::unordered_map allocates a node per insert).
#pragma once

#include <cstdint>
#include <vector>

namespace hj {

template <class V>
class PtrMap {
 public:
  PtrMap() : slots_(64) {}

  // Inserts key (not present, not null).
  void insert(const void *key, V *value) {
    if ((used_ + 1) * 2 > slots_.size()) grow();
    size_t i = probeFree(key);
    if (slots_[i].key == nullptr) ++used_;  // a tombstone is reused without growing `used_`
    slots_[i] = {key, value};
    ++size_;
  }

  V *find(const void *key) const {
    if (key == nullptr || key == tombstone()) return nullptr;
    size_t mask = slots_.size() - 1;
    for (size_t i = hash(key) & mask;; i = (i + 1) & mask) {
      const Slot &s = slots_[i];
      if (s.key == key) return s.value;
      if (s.key == nullptr) return nullptr;
    }
  }

  // Removes key and returns its value, or nullptr when absent.
  V *erase(const void *key) {
    if (key == nullptr || key == tombstone()) return nullptr;
    size_t mask = slots_.size() - 1;
    for (size_t i = hash(key) & mask;; i = (i + 1) & mask) {
      Slot &s = slots_[i];
      if (s.key == key) {
        V *v = s.value;
        s = {tombstone(), nullptr};
        --size_;
        return v;
      }
      if (s.key == nullptr) return nullptr;
    }
  }

  size_t size() const { return size_; }

  template <class F>
  void forEach(F &&f) const {
    for (const Slot &s : slots_)
      if (s.key && s.key != tombstone()) f(s.key, s.value);
  }

 private:
  struct Slot {
    const void *key = nullptr;
    V *value = nullptr;
  };
  static const void *tombstone() { return reinterpret_cast<const void *>(uintptr_t{1}); }
  static size_t hash(const void *p) {
    uint64_t x = reinterpret_cast<uintptr_t>(p);
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return static_cast<size_t>(x);
  }
  size_t probeFree(const void *key) const {
    size_t mask = slots_.size() - 1;
    for (size_t i = hash(key) & mask;; i = (i + 1) & mask)
      if (slots_[i].key == nullptr || slots_[i].key == tombstone()) return i;
    (void)key;
  }
  // Rehashes into a larger table; if allocating it throws, the map is unchanged.
  void grow() {
    size_t n = slots_.size();
    while (size_ * 4 >= n) n *= 2;  // keep load low after rehash
    std::vector<Slot> fresh(n);
    size_t mask = n - 1;
    for (const Slot &s : slots_) {
      if (!s.key || s.key == tombstone()) continue;
      size_t i = hash(s.key) & mask;
      while (fresh[i].key) i = (i + 1) & mask;
      fresh[i] = s;
    }
    slots_.swap(fresh);
    used_ = size_;
  }

  std::vector<Slot> slots_;
  size_t used_ = 0;  // live + tombstones
  size_t size_ = 0;
};

}  // namespace hj
