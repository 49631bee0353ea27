// block.h - one buffer of a context: where its memory is, what it holds and
// where it came from (the pool, a zeroed arena region, or a graph's plan).
#pragma once

#include <cstddef>
#include <cstdint>

#include "record/call_record.h"

namespace hj {

struct ArenaRegion {
  void *base = nullptr;
  size_t capacity = 0;
  size_t offset = 0;
  size_t live = 0;  // buffers handed out and not yet freed
};

// One buffer handed out by hj_alloc (or cached in the pool).
struct Block {
  void *ptr = nullptr;
  size_t capacity = 0;   // bytes held (pool: rounded size; arena: aligned size)
  size_t bytes = 0;      // bytes requested
  uint64_t id = 0;       // buffer id for records
  uint32_t flags = 0;
  uint32_t dtype = 0;
  ArenaRegion *region = nullptr;  // non-null for arena buffers
  int32_t planned = -1;  // graph mode: index of the planned allocation whose memory this is (not the pool's)
  uint32_t stream = 0;    // the stream it was allocated on (its pool cache or arena)
  uint64_t usedOn = 0;    // bit s: work on stream s != `stream` uses it (hj_record_use)
  char lastKernel[40] = {};  // HOSTJIT_CHECK_ZEROED: last kernel given this buffer (a copy: tables may go first)
  char name[40] = {};
};

// What records say of a block.
inline RecordedBuffer recorded(const Block &b) { return {b.id, b.bytes, b.flags, b.dtype}; }

}  // namespace hj
