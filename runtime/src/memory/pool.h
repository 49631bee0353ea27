// pool.h - the caching pool of plain buffers: cached by stream and rounded
// size and reused in stream order. A block goes back to the cache of the
// stream it was allocated on, and only allocations on that stream take it;
// a block that work on other streams used is held back until that work has
// passed (Buffers' deferred frees).
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "memory/block.h"
#include "memory/device_memory.h"

namespace hj {

class Pool {
 public:
  Pool(DeviceMemory &memory, hj_stats &stats) : memory_(memory), stats_(stats) {}
  ~Pool();
  // A block of at least `bytes` for stream `stream`, from that stream's cache
  // when one of the same rounded size is free: the one at `prefer` if it is
  // there (graph mode keeps its outputs where its nodes point), else the
  // last cached. Block objects are recycled so steady state allocates nothing.
  // Sizes are rounded up to a multiple of 512 bytes below kTrimFrom, and
  // above it to a quarter of their power of two (at most 25% more).
  // A block of kTrimFrom bytes or more that no cached block serves first
  // releases the stream's cached blocks of kTrimFrom bytes or more that are
  // smaller than it, when together they hold at least as much: sizes that
  // only grow (a decode loop's outputs) would otherwise keep every size they
  // passed cached, and the cache would grow with the number of sizes.
  int32_t allocate(size_t bytes, uint32_t stream, Block **out, const void *prefer = nullptr);
  // Caches the block for its stream (block->stream).
  void release(Block *block);
  // Returns every cached block to the backend.
  void emptyCache();
  Block *newBlock();
  void recycle(Block *b) { spare_.push_back(b); }

 private:
  static constexpr size_t kTrimFrom = size_t{64} << 10;
  static size_t roundSize(size_t bytes);
  void trimBelow(size_t size, uint32_t stream);
  // Returns the blocks to the backend and keeps their Block objects.
  void releaseAll(std::vector<Block *> &blocks);
  DeviceMemory &memory_;
  hj_stats &stats_;
  // Keyed by rounded size | stream (sizes are multiples of 512, streams < 64).
  std::unordered_map<size_t, std::vector<Block *>> cached_;
  std::vector<Block *> spare_;
};

}  // namespace hj
