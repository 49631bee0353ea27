// arena.cpp - the zeroed arenas.
#include "memory/arena.h"

#include <algorithm>

#include "base/error.h"

namespace hj {

int32_t Arena::allocate(Block *block, size_t *grewBytes) {
  *grewBytes = 0;
  size_t need = std::max<size_t>((block->bytes + kAlign - 1) / kAlign * kAlign, kAlign);
  if (!current_ || current_->capacity - current_->offset < need) {
    size_t used = current_ ? current_->offset : 0;
    size_t cap = std::max({kMinRegion, current_ ? current_->capacity * 2 : 0, used + need});
    cap = (cap + kMinRegion - 1) / kMinRegion * kMinRegion;
    void *p = nullptr;
    if (int32_t st = memory_.allocate(cap, &p)) return st;
    int32_t st = memory_.injector() ? memory_.injector()->check("memset of a new zeroed-arena region of %zu bytes", cap)
                                    : HJ_OK;
    if (st == HJ_OK) st = memory_.backend().memsetZero(p, cap);
    if (st) {
      memory_.release(p, cap);
      return st;
    }
    auto region = std::make_unique<ArenaRegion>();
    region->base = p;
    region->capacity = cap;
    if (current_ && current_->live == 0) {
      regions_.erase(std::find(regions_.begin(), regions_.end(), current_));
      stats_.arena_bytes -= current_->capacity;
      memory_.release(current_->base, current_->capacity);
      delete current_;
    }
    current_ = region.release();
    regions_.push_back(current_);
    stats_.arena_bytes += cap;
    ++stats_.arena_growths;
    *grewBytes = cap;
  }
  block->ptr = static_cast<char *>(current_->base) + current_->offset;
  block->capacity = need;
  block->region = current_;
  current_->offset += need;
  ++current_->live;
  return HJ_OK;
}

void Arena::release(Block *block) {
  ArenaRegion *r = block->region;
  HJ_INVARIANT(r && r->live > 0);
  if (--r->live != 0) return;
  if (r == current_) {
    r->offset = 0;  // every buffer was left zero: reuse without a memset
    return;
  }
  regions_.erase(std::find(regions_.begin(), regions_.end(), r));
  stats_.arena_bytes -= r->capacity;
  memory_.release(r->base, r->capacity);
  delete r;
}

int32_t Arena::checkZero(bool *isZero) {
  *isZero = true;
  std::vector<unsigned char> host;
  for (ArenaRegion *r : regions_) {
    size_t from = r->live ? r->offset : 0;
    size_t n = r->capacity - from;
    host.resize(n);
    if (int32_t st = memory_.backend().synchronize()) return st;
    if (int32_t st = memory_.backend().copyToHost(host.data(), static_cast<char *>(r->base) + from, n)) return st;
    if (std::any_of(host.begin(), host.end(), [](unsigned char c) { return c != 0; })) *isZero = false;
  }
  return HJ_OK;
}

Arena &Arenas::of(uint32_t s) {
  if (s >= arenas_.size()) arenas_.resize(s + 1);
  if (!arenas_[s]) arenas_[s] = std::make_unique<Arena>(memory_, stats_);
  return *arenas_[s];
}

int32_t Arenas::checkZero(bool *isZero) {
  *isZero = true;
  for (auto &a : arenas_) {
    bool z = true;
    if (a)
      if (int32_t st = a->checkZero(&z)) return st;
    *isZero = *isZero && z;
  }
  return HJ_OK;
}

Arena::~Arena() {
  for (ArenaRegion *r : regions_) {
    memory_.release(r->base, r->capacity);
    delete r;
  }
}

}  // namespace hj
