// buffers.cpp - a buffer's life: allocation per the contract, release,
// deferred frees across streams, the zero check and the launch record.
#include "memory/buffers.h"

#include <cinttypes>
#include <cstring>
#include <string>

#include "base/dtypes.h"
#include "base/error.h"

namespace hj {

int32_t bufferBytes(const int64_t *sizes, const int64_t *strides, uint32_t rank, uint32_t esize, const char *name,
                    uint64_t *out) {
  uint64_t span = 1;  // elements
  bool empty = false;
  for (uint32_t d = 0; d < rank; ++d) {
    if (sizes[d] < 0)
      return fail(HJ_ERR_INVALID_ARGUMENT, "buffer %%%s: extent %u is %" PRId64 ", expected a size >= 0", name, d,
                  sizes[d]);
    if (strides && strides[d] < 0)
      return fail(HJ_ERR_INVALID_ARGUMENT, "buffer %%%s: stride %u is %" PRId64 ", expected >= 0", name, d,
                  strides[d]);
    if (sizes[d] == 0) empty = true;
  }
  if (empty) {
    *out = 0;
    return HJ_OK;
  }
  bool overflow = false;
  if (strides) {
    uint64_t last = 0;
    for (uint32_t d = 0; d < rank; ++d) {
      uint64_t t;
      overflow |= __builtin_mul_overflow(static_cast<uint64_t>(sizes[d] - 1), static_cast<uint64_t>(strides[d]), &t);
      overflow |= __builtin_add_overflow(last, t, &last);
    }
    overflow |= __builtin_add_overflow(last, 1, &span);
  } else {
    for (uint32_t d = 0; d < rank; ++d) overflow |= __builtin_mul_overflow(span, static_cast<uint64_t>(sizes[d]), &span);
  }
  overflow |= __builtin_mul_overflow(span, esize, out);
  if (overflow || *out > HJ_MAX_BUFFER_BYTES)
    return fail(HJ_ERR_INVALID_ARGUMENT, "buffer %%%s: size overflows (extents too large)", name);
  return HJ_OK;
}

Buffers::Buffers(Backend &backend, hj_stats &stats, FaultInjector &injector, CallRecord &record,
                 const Settings &settings, uint64_t memoryLimit)
    : backend_(backend),
      stats_(stats),
      injector_(injector),
      record_(record),
      settings_(settings),
      memory_(backend, stats, memoryLimit),
      pool_(memory_, stats),
      arenas_(memory_, stats) {
  memory_.setInjector(&injector_);
  memory_.setReclaim([this] {
    reclaimDeferred();
    pool_.emptyCache();
  });
}

Buffers::~Buffers() {
  if (!deferred_.empty()) (void)backend_.synchronize();
  for (DeferredFree &d : deferred_) {
    for (void *e : d.events) backend_.destroyEvent(e);
    if (d.block->region) {
      arenas_.release(d.block);
      delete d.block;
    } else {
      pool_.release(d.block);
    }
  }
  deferred_.clear();
  for (void *e : spareEvents_) backend_.destroyEvent(e);
  live_.forEach([&](const void *, Block *b) {
    if (b->planned >= 0) {
      delete b;  // a graph's memory, returned with the graph
    } else if (b->region) {
      arenas_.release(b);
      delete b;
    } else {
      pool_.release(b);
    }
  });
}

namespace {

// An allocation's failure as the caller sees it: out of memory names the
// buffer ("buffer %h: out of device memory: ...").
int32_t named(int32_t st, const BufferRequest &r) {
  if (st != HJ_ERR_OUT_OF_MEMORY || !r.name || !*r.name) return st;
  std::string why = hj_last_error();
  return fail(st, "buffer %%%s: %s", r.name, why.c_str());
}

}  // namespace

int32_t Buffers::allocate(const BufferRequest &r, Block **out) {
  bool zero = r.flags & HJ_ALLOC_ZERO_INIT;
  uint32_t esize = hj_dtype_size(r.dtype);
  bool fromArena = fromZeroedArena(r.flags, settings_);
  if (!deferred_.empty()) pollDeferred();
  Block *b = nullptr;
  size_t grew = 0;
  if (r.at) {
    b = pool_.newBlock();
    b->ptr = r.at;
  } else if (fromArena) {
    b = pool_.newBlock();
    b->bytes = r.bytes;
    b->stream = backend_.currentStream();
    int32_t st = HJ_OK;
    try {
      st = arenas_.of(b->stream).allocate(b, &grew);
    } catch (...) {
      pool_.recycle(b);
      throw;
    }
    if (st) {
      pool_.recycle(b);
      return named(st, r);
    }
  } else {
    if (int32_t st = pool_.allocate(r.bytes, backend_.currentStream(), &b, r.prefer)) return named(st, r);
    b->region = nullptr;
    b->lastKernel[0] = '\0';
  }
  b->planned = r.planned;
  // From here on the block is ours: give it back if anything fails or throws.
  try {
    b->bytes = r.bytes;
    b->flags = r.flags;
    b->dtype = r.dtype;
    b->id = nextId_++;
    std::strncpy(b->name, r.name, sizeof b->name - 1);
    b->name[sizeof b->name - 1] = '\0';
    RecordedBuffer rb = recorded(*b);
    if (grew) ++stats_.memsets;
    record_.alloc(r.recordStream, rb, b->name, grew);
    if (zero && !fromArena && r.bytes) {
      if (!r.deferInit) {
        int32_t st = injector_.check("memset of %%%s", b->name);
        if (st == HJ_OK) st = backend_.memsetZero(b->ptr, r.bytes);
        if (st == HJ_OK && settings_.sync) st = backend_.synchronize();
        if (st) {
          giveBack(b);
          return st;
        }
      }
      ++stats_.memsets;
      record_.memset(r.recordStream, rb, b->name);
    } else if (!zero && settings_.fillNan && r.bytes) {
      if (!r.deferInit) {
        int32_t st = injector_.check("fill of %%%s", b->name);
        if (st == HJ_OK) st = backend_.fill(b->ptr, r.bytes, nanPattern(r.dtype), esize);
        if (st) {
          giveBack(b);
          return st;
        }
      }
      ++stats_.fills;
      record_.fill(r.recordStream, rb, b->name);
    }
    live_.insert(b->ptr, b);
    ++stats_.allocs;
    stats_.live_bytes += r.bytes;
    if (stats_.live_bytes > stats_.peak_bytes) stats_.peak_bytes = stats_.live_bytes;
  } catch (...) {
    live_.erase(b->ptr);
    giveBack(b);
    throw;
  }
  *out = b;
  return HJ_OK;
}

void Buffers::giveBack(Block *b) {
  if (b->planned >= 0) {
    pool_.recycle(b);
  } else if (b->region) {
    arenas_.release(b);
    pool_.recycle(b);
  } else {
    pool_.release(b);
  }
}

int32_t Buffers::free(void *ptr, bool onError, uint32_t recordStream) {
  Block *b = live_.erase(ptr);
  if (!b) return onError ? HJ_OK : fail(HJ_ERR_INVALID_ARGUMENT, "hj_free: %p is not a live buffer of this context", ptr);
  int32_t st = HJ_OK;
  try {
    record_.free(recordStream, recorded(*b), b->name);
    if (!onError && b->region && settings_.checkZeroed && b->bytes) st = checkZeroedOnFree(b, recordStream);
  } catch (...) {
    release(b);  // released even when the record or the check cannot be made
    throw;
  }
  release(b);
  return st;
}

void Buffers::noteCollective(uint32_t kind, const void *src, const void *dst, uint64_t bytes, uint32_t dtype,
                             uint32_t op, int32_t peer, uint32_t recordStream) {
  if (!record_.on()) return;
  const Block *b = live_.find(dst ? dst : src);
  RecordedBuffer rb = b ? recorded(*b) : RecordedBuffer{};
  record_.collective(recordStream, b ? &rb : nullptr, kind, bytes, dtype, op, peer);
}

FindBuffer Buffers::findBuffer() const {
  return [this](const void *p, uint64_t *id, uint64_t *offset) {
    const Block *b = holding(p, offset);
    if (b) *id = b->id;
    return b != nullptr;
  };
}

Block *Buffers::holding(const void *ptr, uint64_t *offset) const {
  *offset = 0;
  if (Block *b = live_.find(ptr)) return b;
  Block *found = nullptr;
  auto p = reinterpret_cast<uintptr_t>(ptr);
  live_.forEach([&](const void *key, Block *b) {
    auto start = reinterpret_cast<uintptr_t>(key);
    if (p > start && p - start < b->bytes) {
      found = b;
      *offset = p - start;
    }
  });
  return found;
}

void Buffers::noteMatmul(const MatmulCall &m, uint32_t recordStream) {
  if (record_.on()) record_.matmul(recordStream, m, findBuffer());
}

void Buffers::freeLive(Block *b, uint32_t recordStream) {
  try {
    record_.free(recordStream, recorded(*b), b->name);
  } catch (...) {
    release(b);  // the buffer is released even if the record cannot grow
    throw;
  }
  release(b);
}

int32_t Buffers::checkZeroedOnFree(Block *b, uint32_t recordStream) {
  if (int32_t st = backend_.synchronize()) return st;
  std::vector<unsigned char> host(b->bytes);
  if (int32_t st = backend_.copyToHost(host.data(), b->ptr, b->bytes)) return st;
  for (size_t i = 0; i < host.size(); ++i) {
    if (host[i] == 0) continue;
    // Repair the arena so later buffers still start at zero (point 8).
    backend_.memsetZero(b->ptr, b->bytes);
    ++stats_.memsets;
    record_.memset(recordStream, recorded(*b), b->name);
    return fail(HJ_ERR_NOT_ZEROED,
                "HOSTJIT_CHECK_ZEROED: buffer %%%s (%s, %zu bytes, zero_init resets_to_zero) was not zero when "
                "freed: byte %zu is 0x%02x; the last kernel given it was @%s, which must leave it zero",
                b->name, dtypeName(b->dtype), b->bytes, i, host[i], b->lastKernel[0] ? b->lastKernel : "(none)");
  }
  return HJ_OK;
}

void Buffers::markUsed(Block *b, uint32_t recordStream) {
  record_.use(recordStream, recorded(*b), b->name);
  uint32_t s = backend_.currentStream();
  if (s != b->stream) b->usedOn |= uint64_t{1} << s;
}

void Buffers::noteLaunchSlow(const KernelEntry &k, uint32_t kernel, const int64_t *dims, void *const *params,
                             uint32_t recordStream) {
  // Each arena or planned buffer given to the kernel notes it (a view at
  // an offset too while recording, when its buffer is found).
  bool rec = record_.on();
  for (size_t i = 0; i < k.params.size(); ++i) {
    int32_t kind = k.params[i];
    if (kind != HJ_PARAM_PTR && (kind & 0xff) != HJ_PARAM_TENSOR) continue;
    void *p = *static_cast<void *const *>(params[i]);
    uint64_t offset = 0;
    Block *b = live_.find(p);
    if (!b && rec) b = holding(p, &offset);
    if (b && (b->region || b->planned >= 0)) {
      std::strncpy(b->lastKernel, k.name.c_str(), sizeof b->lastKernel - 1);
      b->lastKernel[sizeof b->lastKernel - 1] = '\0';
    }
  }
  if (!rec) return;
  LaunchedKernel launched{k.name.c_str(), kernel, &k.params, k.launchFlags, k.cluster, k.custom != nullptr};
  record_.launch(recordStream, launched, dims, params, findBuffer());
}

int32_t Buffers::takeEvent(void **out) {
  if (!spareEvents_.empty()) {
    *out = spareEvents_.back();
    spareEvents_.pop_back();
    return HJ_OK;
  }
  return backend_.createEvent(out);
}

void Buffers::finishDeferred(DeferredFree &d) {
  for (void *e : d.events) spareEvents_.push_back(e);
  d.events.clear();
  d.block->usedOn = 0;
  giveBack(d.block);
  d.block = nullptr;
}

void Buffers::release(Block *b) {
  stats_.live_bytes -= b->bytes;
  ++stats_.frees;
  uint64_t others = b->usedOn & ~(uint64_t{1} << b->stream);
  if (!others || b->planned >= 0) {
    giveBack(b);
    return;
  }
  // One event per stream that used it, recorded there now: work queued
  // there later cannot use the buffer (it is freed).
  DeferredFree d;
  d.block = b;
  uint32_t was = backend_.currentStream();
  bool ok = true;
  try {
    deferred_.reserve(deferred_.size() + 1);
    for (uint32_t i = 0; i < HJ_MAX_STREAMS && ok; ++i) {
      if (!(others >> i & 1) || i >= backend_.numStreams()) continue;
      void *e = nullptr;
      if (takeEvent(&e) != HJ_OK) {
        ok = false;
        break;
      }
      try {
        d.events.push_back(e);
      } catch (...) {
        backend_.destroyEvent(e);
        throw;
      }
      backend_.setStream(i);
      ok = backend_.recordEvent(e) == HJ_OK;
    }
  } catch (...) {
    ok = false;
  }
  backend_.setStream(was);
  if (!ok) {
    // No event to wait for: wait for everything instead, then reuse.
    (void)backend_.synchronize();
    for (void *e : d.events) backend_.destroyEvent(e);
    d.events.clear();
    b->usedOn = 0;
    giveBack(b);
    return;
  }
  ++stats_.deferred_frees;
  deferred_.push_back(std::move(d));
}

void Buffers::pollDeferred() {
  size_t keep = 0;
  for (size_t i = 0; i < deferred_.size(); ++i) {
    DeferredFree &d = deferred_[i];
    bool done = true;
    for (void *e : d.events) {
      bool one = false;
      if (backend_.eventDone(e, &one) != HJ_OK) one = false;  // a faulted device: keep it
      done = done && one;
    }
    if (done) {
      finishDeferred(d);
    } else {
      if (keep != i) deferred_[keep] = std::move(d);  // never onto itself: that would empty its events
      ++keep;
    }
  }
  deferred_.resize(keep);
}

void Buffers::reclaimDeferred() {
  if (deferred_.empty()) return;
  if (backend_.synchronize() != HJ_OK) return;  // a faulted device: keep them
  pollDeferred();
}

void Buffers::emptyCache() {
  if (!deferred_.empty()) {
    (void)backend_.synchronize();
    pollDeferred();
  }
  pool_.emptyCache();
}

}  // namespace hj
