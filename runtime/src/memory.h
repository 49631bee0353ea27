// memory.h - device memory accounting, the caching pool and the zeroed arena.
//
// These implement the allocation contract (docs/allocation-contract.md) on top of any Backend:
//  - DeviceMemory: every byte held from the backend, with the optional limit
//    (so out-of-memory is testable) and one retry after reclaiming deferred
//    frees and releasing the pool's cached blocks (contract point 1).
//  - Pool: plain buffers, cached by stream and rounded size and reused in
//    stream order: a block goes back to the cache of the stream it was
//    allocated on, and only allocations on that stream take it. A block that
//    work on other streams used is held back until that work has passed
//    (the context's deferred frees, streams.cpp).
//  - Arena: zeroed memory for `zero_init resets_to_zero` buffers (point 3).
//    Buffers are bump-allocated from the current region; when its last
//    buffer is freed the offset returns to 0 and the memory, which kernels
//    left zero, is reused without a memset. When a request does not fit, a
//    larger region is allocated and zeroed once; older regions stay alive
//    until their last buffer is freed. One arena per stream (Arenas).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <unordered_map>
#include <vector>

#include "backend.h"
#include "inject.h"

namespace hj {

struct ArenaRegion;

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

class Pool;

class DeviceMemory {
 public:
  DeviceMemory(Backend &backend, hj_stats &stats, uint64_t limit) : backend_(backend), stats_(stats), limit_(limit) {}
  void setPool(Pool *pool) { pool_ = pool; }
  void setInjector(FaultInjector *injector) { injector_ = injector; }
  // Called before the retry: hands back to the pool what its owner holds
  // for later (the context's deferred frees, after waiting for the device).
  void setReclaim(std::function<void()> reclaim) { reclaim_ = std::move(reclaim); }
  FaultInjector *injector() { return injector_; }
  // Allocates from the backend within the limit; on out-of-memory reclaims,
  // releases the pool's cached blocks and retries once.
  int32_t allocate(size_t bytes, void **out);
  void release(void *ptr, size_t bytes);
  Backend &backend() { return backend_; }

 private:
  int32_t tryAllocate(size_t bytes, void **out);
  Backend &backend_;
  hj_stats &stats_;
  uint64_t limit_;
  Pool *pool_ = nullptr;
  FaultInjector *injector_ = nullptr;
  std::function<void()> reclaim_;
};

class Pool {
 public:
  Pool(DeviceMemory &memory, hj_stats &stats) : memory_(memory), stats_(stats) {}
  ~Pool();
  // A block of at least `bytes` for stream `stream`, from that stream's cache
  // when one of the same rounded size is free: the one at `prefer` if it is
  // there (graph mode keeps its outputs where its nodes point), else the
  // last cached. Block objects are recycled so steady state allocates nothing.
  int32_t allocate(size_t bytes, uint32_t stream, Block **out, const void *prefer = nullptr);
  // Caches the block for its stream (block->stream).
  void release(Block *block);
  // Returns every cached block to the backend.
  void emptyCache();
  Block *newBlock();
  void recycle(Block *b) { spare_.push_back(b); }

 private:
  static size_t roundSize(size_t bytes);
  DeviceMemory &memory_;
  hj_stats &stats_;
  // Keyed by rounded size | stream (sizes are multiples of 512, streams < 64).
  std::unordered_map<size_t, std::vector<Block *>> cached_;
  std::vector<Block *> spare_;
};

struct ArenaRegion {
  void *base = nullptr;
  size_t capacity = 0;
  size_t offset = 0;
  size_t live = 0;  // buffers handed out and not yet freed
};

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
