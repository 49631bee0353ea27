// device_memory.h - every byte a context holds from its backend: the
// optional limit (so out-of-memory is testable) and one retry after
// reclaiming deferred frees and releasing the pool's cached blocks
// (contract point 1, docs/allocation-contract.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>

#include "backend/backend.h"
#include "base/fault_injection.h"

namespace hj {

class DeviceMemory {
 public:
  DeviceMemory(Backend &backend, hj_stats &stats, uint64_t limit) : backend_(backend), stats_(stats), limit_(limit) {}
  void setInjector(FaultInjector *injector) { injector_ = injector; }
  // Called before the retry: hands back to the pool what its owner holds
  // for later (the context's deferred frees, after waiting for the device)
  // and releases the pool's cached blocks. Without it, no retry.
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
  FaultInjector *injector_ = nullptr;
  std::function<void()> reclaim_;
};

}  // namespace hj
