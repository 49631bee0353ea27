// key_hashes.h - a set of signature hashes that allocates once: graph
// mode remembers the keys it let go of (run eagerly, evicted from
// probation) to know a signature that comes back.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace hj {

// Hashes, up to 4096 (then it starts again), in 8192 slots probed in
// turn, allocated at the first remember(): remembering and forgetting
// allocate nothing after. A false match (two keys of one hash) is possible
// and only costs its user a wrong guess.
class KeyHashes {
 public:
  // Whether `h` was there; it is not any more.
  bool forget(uint64_t h);
  void remember(uint64_t h);
  void clear();

 private:
  std::vector<uint64_t> slots_;
  size_t used_ = 0;  // slots ever filled since the last start
};

}  // namespace hj
