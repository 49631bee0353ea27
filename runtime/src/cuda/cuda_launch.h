// cuda_launch.h - a kernel's launch attributes on CUDA: the cuLaunchKernelEx
// attributes of cooperative, cluster and programmatic dependent launches,
// and the check that a cooperative grid fits on the device at once.
#pragma once

#ifdef HOSTJIT_HAVE_NVRTC

#include <cstdint>
#include <unordered_map>

#include "backend/backend.h"
#include "cuda/cuda_driver.h"

namespace hj {

// The launch attributes of kernel k (its HJ_LAUNCH_* flags and cluster
// dims), at most three, written to out; returns how many. forGraph leaves
// out the programmatic dependent launch, which a graph expresses by its
// edges rather than by a node attribute.
unsigned launchAttributes(const KernelEntry &k, bool forGraph, CUlaunchAttribute out[3]);

// Whether a cooperative grid can be co-resident: the most blocks of the
// kernel, at a block size and dynamic shared memory, that the device holds
// at once (occupancy per multiprocessor x multiprocessors). Kept per
// function and shape, so only the first launch of a shape asks the driver.
// One per backend: its functions live as long as the backend's modules.
class CoResidency {
 public:
  // HJ_OK when grid fits; else HJ_ERR_INVALID_ARGUMENT naming the kernel,
  // its grid and block, and the most blocks the device can hold. The
  // device's context must be current.
  int32_t check(const Driver &d, CUdevice dev, int32_t ordinal, const KernelEntry &k, const hj_dim3 &grid,
                const hj_dim3 &block, uint32_t smem);

 private:
  struct Key {
    CUfunction f;
    uint32_t threads, smem;
    bool operator==(const Key &o) const { return f == o.f && threads == o.threads && smem == o.smem; }
  };
  struct KeyHash {
    size_t operator()(const Key &k) const {
      return std::hash<const void *>()(k.f) ^ (size_t(k.threads) << 1) ^ (size_t(k.smem) << 12);
    }
  };
  std::unordered_map<Key, uint64_t, KeyHash> most_;  // the most co-resident blocks
  int sms_ = 0;                                       // multiprocessors, once asked
};

}  // namespace hj

#endif  // HOSTJIT_HAVE_NVRTC
