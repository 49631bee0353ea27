// key_hashes.cpp - KeyHashes: open addressing over a fixed table.
#include "graph/key_hashes.h"

#include <algorithm>

namespace hj {

namespace {

constexpr size_t kSlots = 8192;             // twice the hashes held at most
constexpr size_t kRemembered = kSlots / 2;  // hashes held before starting again
constexpr uint64_t kEmpty = 0, kGone = 1;   // slots never used, and of a hash forgotten

// A hash as a slot holds it: never kEmpty or kGone (0 and 1 share 2 and 3's
// slots; a false match only costs a wrong guess).
uint64_t mixed(uint64_t h) { return h < 2 ? h + 2 : h; }

}  // namespace

bool KeyHashes::forget(uint64_t h) {
  if (slots_.empty()) return false;
  h = mixed(h);
  for (size_t i = h % kSlots;; i = (i + 1) % kSlots) {
    if (slots_[i] == kEmpty) return false;
    if (slots_[i] == h) {
      slots_[i] = kGone;
      return true;
    }
  }
}

void KeyHashes::remember(uint64_t h) {
  if (slots_.empty()) slots_.assign(kSlots, kEmpty);  // once: the calls after allocate nothing
  if (used_ >= kRemembered) clear();  // full (forgotten ones count until then): start again
  h = mixed(h);
  size_t i = h % kSlots;
  while (slots_[i] != kEmpty && slots_[i] != h) i = (i + 1) % kSlots;
  if (slots_[i] == kEmpty) ++used_;
  slots_[i] = h;
}

void KeyHashes::clear() {
  std::fill(slots_.begin(), slots_.end(), kEmpty);
  used_ = 0;
}

}  // namespace hj
