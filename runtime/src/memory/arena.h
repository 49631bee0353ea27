// arena.h - zeroed memory for `zero_init resets_to_zero` buffers (contract
// point 3). Buffers are bump-allocated from the current region; when its
// last buffer is freed the offset returns to 0 and the memory, which kernels
// left zero, is reused without a memset. When a request does not fit, a
// larger region is allocated and zeroed once; older regions stay alive
// until their last buffer is freed. One arena per stream (Arenas).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "memory/block.h"
#include "memory/device_memory.h"

namespace hj {

class Arena {
 public:
  Arena(DeviceMemory &memory, hj_stats &stats) : memory_(memory), stats_(stats) {}
  ~Arena();
  // Places `block` (bytes set) in zeroed memory. *grewBytes is set to the new
  // region's size when a region had to be allocated and zeroed, else 0.
  int32_t allocate(Block *block, size_t *grewBytes);
  void release(Block *block);
  // Checks that the unused bytes of every region are zero (test hook).
  int32_t checkZero(bool *isZero);

  static constexpr size_t kMinRegion = size_t{1} << 20;
  static constexpr size_t kAlign = 256;

 private:
  DeviceMemory &memory_;
  hj_stats &stats_;
  ArenaRegion *current_ = nullptr;
  std::vector<ArenaRegion *> regions_;
};

// The zeroed arenas of a context, one per stream (made on first use).
class Arenas {
 public:
  Arenas(DeviceMemory &memory, hj_stats &stats) : memory_(memory), stats_(stats) {}
  // The arena of stream s, made when absent (std::bad_alloc when it cannot be).
  Arena &of(uint32_t s);
  void release(Block *block) { of(block->stream).release(block); }
  int32_t checkZero(bool *isZero);

 private:
  DeviceMemory &memory_;
  hj_stats &stats_;
  std::vector<std::unique_ptr<Arena>> arenas_;
};

}  // namespace hj
