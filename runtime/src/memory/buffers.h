// buffers.h - a buffer's life, from one owner: the backend memory, the
// caching pool, the zeroed arenas, the live map (pointer -> block) and the
// deferred frees of buffers that work on other streams still uses. It
// implements the allocation contract (docs/allocation-contract.md) on any
// Backend, counts what it does in hj_stats and records it in the call record.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "backend/backend.h"
#include "base/call_path.h"
#include "base/fault_injection.h"
#include "base/ptr_map.h"
#include "base/settings.h"
#include "memory/arena.h"
#include "memory/block.h"
#include "memory/device_memory.h"
#include "memory/pool.h"
#include "record/buffer_record.h"
#include "record/call_record.h"

namespace hj {

// The bytes of a buffer with these extents and element strides (NULL:
// contiguous); stride 0 dims take no memory. Errors name the buffer.
int32_t bufferBytes(const int64_t *sizes, const int64_t *strides, uint32_t rank, uint32_t esize, const char *name,
                    uint64_t *out);

// What allocate() is asked for.
struct BufferRequest {
  uint64_t bytes = 0;
  uint32_t flags = 0, dtype = 0;  // HJ_ALLOC_*, hj_dtype
  const char *name = "";
  uint32_t recordStream = 0;  // the program's stream, which the record names
  // The zeroing or NaN fill is recorded and counted but left to the caller
  // (a graph's memset node).
  bool deferInit = false;
  // Planned memory of a graph (allocation `planned` of its plan) instead of
  // the arena's or the pool's.
  void *at = nullptr;
  int32_t planned = -1;
  // A pool buffer is the cached block at `prefer` when that one is free.
  const void *prefer = nullptr;
};

class Buffers {
 public:
  Buffers(Backend &backend, hj_stats &stats, FaultInjector &injector, CallRecord &record, const Settings &settings,
          uint64_t memoryLimit);
  // Waits for deferred frees and gives every block back (live ones too).
  ~Buffers();
  Buffers(const Buffers &) = delete;
  Buffers &operator=(const Buffers &) = delete;

  // A buffer as hj_alloc makes it eagerly: from the arena or the pool,
  // zeroed or NaN-filled per its flags, recorded, counted and live.
  int32_t allocate(const BufferRequest &r, Block **out);
  Block *find(const void *ptr) const { return live_.find(ptr); }
  // The live buffer whose memory holds ptr (its start or a view's, *offset
  // bytes in); a search of every live buffer past its start, for records.
  Block *holding(const void *ptr, uint64_t *offset) const;
  // Takes a buffer out of the live map (nullptr when it is not live).
  Block *take(const void *ptr) { return live_.erase(ptr); }
  // Takes a buffer taken out of the live map out of use: counted, and
  // returned to its arena, pool or graph, or held back while work on
  // another stream uses it.
  void release(Block *b);
  // hj_free of a live buffer: taken out of the live map, recorded as a free
  // on `recordStream`, checked (HOSTJIT_CHECK_ZEROED, unless onError) and
  // released, even when the record or the check fails. A pointer that is no
  // live buffer is an error, or ignored when onError (hj_free_on_error).
  int32_t free(void *ptr, bool onError, uint32_t recordStream);
  // Recorded as a free on `recordStream`, then released (b is taken already).
  void freeLive(Block *b, uint32_t recordStream);
  // HOSTJIT_CHECK_ZEROED for an arena buffer being freed: it must be zero.
  int32_t checkZeroedOnFree(Block *b, uint32_t recordStream);
  // Work on the backend's current stream uses b (hj_record_use); recorded,
  // when the record is on, as made on the program's recordStream.
  void markUsed(Block *b, uint32_t recordStream);
  // A launch of `k`: recorded (buffers named by id) when the record is on,
  // and each arena or planned buffer given to it notes the kernel
  // (HOSTJIT_CHECK_ZEROED names it).
  void noteLaunch(const KernelEntry &k, uint32_t kernel, const int64_t *dims, void *const *params,
                  uint32_t recordStream) {
    if (record_.on() || settings_.checkZeroed) noteLaunchSlow(k, kernel, dims, params, recordStream);
  }

  // A collective that succeeded: recorded, naming the buffer it writes (or
  // reads, for a send) when it is one of this context's.
  void noteCollective(uint32_t kind, const void *src, const void *dst, uint64_t bytes, uint32_t dtype, uint32_t op,
                      int32_t peer, uint32_t recordStream);
  // A matmul that succeeded: recorded with its operands (buffers by id).
  void noteMatmul(const MatmulCall &c, uint32_t recordStream);
  // Whether the record is on (callers compute what only records need then).
  bool recording() const { return record_.on(); }

  // Deferred frees whose work has passed go back.
  void pollDeferred();
  // hj_empty_cache: waits for deferred frees, then empties the pool.
  void emptyCache();
  // The zeroed arenas' unused memory is zero (test hook).
  int32_t checkArenasZero(bool *isZero) { return arenas_.checkZero(isZero); }
  // Buffer ids start again at 1 (the record was turned on).
  void restartIds() { nextId_ = 1; }

  DeviceMemory &memory() { return memory_; }

 private:
  // A freed buffer that work on other streams still uses: it returns to its
  // stream's cache or arena once `events` (one per such stream) are complete.
  struct DeferredFree {
    Block *block = nullptr;
    std::vector<void *> events;
  };
  void noteLaunchSlow(const KernelEntry &k, uint32_t kernel, const int64_t *dims, void *const *params,
                      uint32_t recordStream);
  // The record's way to name the buffer an address is in.
  FindBuffer findBuffer() const;
  // Gives a block back to its graph, arena or pool cache, at once.
  void giveBack(Block *b);
  // Out of memory: waits for the device, then returns every deferred free.
  void reclaimDeferred();
  int32_t takeEvent(void **out);
  void finishDeferred(DeferredFree &d);

  Backend &backend_;
  hj_stats &stats_;
  FaultInjector &injector_;
  BufferRecord record_;  // the record's entries that name buffers
  const Settings settings_;  // a copy: read on every call
  DeviceMemory memory_;
  Pool pool_;
  Arenas arenas_;
  PtrMap<Block> live_;
  std::vector<DeferredFree> deferred_;
  std::vector<void *> spareEvents_;  // backend events free for deferred frees
  uint64_t nextId_ = 1;
};

}  // namespace hj
