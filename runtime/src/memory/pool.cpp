// pool.cpp - the caching pool.
#include "memory/pool.h"

#include <utility>

namespace hj {

size_t Pool::roundSize(size_t bytes) {
  constexpr size_t kSmall = 512;
  if (bytes == 0) return kSmall;
  if (bytes < kTrimFrom) return (bytes + kSmall - 1) / kSmall * kSmall;
  // Four sizes per power of two: a size that grows a little each call
  // keeps its rounded size for many calls.
  size_t octave = size_t{1} << (63 - __builtin_clzll(bytes));
  size_t unit = octave / 4;
  return (bytes + unit - 1) / unit * unit;
}

Block *Pool::newBlock() {
  if (spare_.empty()) return new Block();
  Block *b = spare_.back();
  spare_.pop_back();
  *b = Block{};
  return b;
}

int32_t Pool::allocate(size_t bytes, uint32_t stream, Block **out, const void *prefer) {
  size_t size = roundSize(bytes);
  auto it = cached_.find(size | stream);
  if (it != cached_.end() && !it->second.empty()) {
    std::vector<Block *> &free = it->second;
    if (prefer && free.back()->ptr != prefer)
      for (Block *&c : free)
        if (c->ptr == prefer) {
          std::swap(c, free.back());
          break;
        }
    Block *b = free.back();
    free.pop_back();
    ++stats_.pool_hits;
    *out = b;
    return HJ_OK;
  }
  if (size >= kTrimFrom) trimBelow(size, stream);
  void *p = nullptr;
  if (int32_t st = memory_.allocate(size, &p)) return st;
  Block *b = newBlock();
  b->ptr = p;
  b->capacity = size;
  b->stream = stream;
  *out = b;
  return HJ_OK;
}

void Pool::trimBelow(size_t size, uint32_t stream) {
  // Keys are a rounded size (a multiple of 512) | the stream (below 64).
  auto smaller = [&](size_t key) {
    size_t bytes = key & ~size_t{511};
    return (key & 511) == stream && bytes >= kTrimFrom && bytes < size;
  };
  size_t held = 0;
  for (const auto &[key, blocks] : cached_)
    if (smaller(key)) held += (key & ~size_t{511}) * blocks.size();
  if (held < size) return;
  for (auto &[key, blocks] : cached_)
    if (smaller(key)) releaseAll(blocks);
}

void Pool::releaseAll(std::vector<Block *> &blocks) {
  for (Block *b : blocks) {
    memory_.release(b->ptr, b->capacity);
    spare_.push_back(b);
  }
  blocks.clear();
}

void Pool::release(Block *block) {
  try {
    block->usedOn = 0;
    cached_[block->capacity | block->stream].push_back(block);
  } catch (...) {  // no host memory to cache it: hand it straight back
    memory_.release(block->ptr, block->capacity);
    delete block;
  }
}

void Pool::emptyCache() {
  for (auto &[size, blocks] : cached_) releaseAll(blocks);
}

Pool::~Pool() {
  emptyCache();
  for (Block *b : spare_) delete b;
}

}  // namespace hj
