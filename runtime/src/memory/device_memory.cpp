// device_memory.cpp - backend memory within the limit, with one retry.
#include "memory/device_memory.h"

#include "base/error.h"

namespace hj {

int32_t DeviceMemory::tryAllocate(size_t bytes, void **out) {
  if (limit_ != 0 && stats_.reserved_bytes + bytes > limit_)
    return fail(HJ_ERR_OUT_OF_MEMORY,
                "out of device memory: %zu more bytes would exceed the limit of %llu bytes (%llu held)", bytes,
                static_cast<unsigned long long>(limit_), static_cast<unsigned long long>(stats_.reserved_bytes));
  int32_t st = backend_.allocate(bytes, out);
  if (st != HJ_OK) return st;
  stats_.reserved_bytes += bytes;
  ++stats_.backend_allocs;
  return HJ_OK;
}

int32_t DeviceMemory::allocate(size_t bytes, void **out) {
  if (injector_)
    if (int32_t st = injector_->check("backend allocation of %zu bytes", bytes)) return st;
  int32_t st = tryAllocate(bytes, out);
  if (st != HJ_ERR_OUT_OF_MEMORY || !reclaim_) return st;
  reclaim_();
  return tryAllocate(bytes, out);
}

void DeviceMemory::release(void *ptr, size_t bytes) {
  backend_.release(ptr);
  stats_.reserved_bytes -= bytes;
  ++stats_.backend_frees;
}

}  // namespace hj
