// cuda_launch.cpp - cooperative, cluster and programmatic dependent launch
// attributes, and the co-residency check of a cooperative grid.
#include "cuda/cuda_launch.h"

#ifdef HOSTJIT_HAVE_NVRTC

#include <cstring>

#include "base/error.h"

namespace hj {

unsigned launchAttributes(const KernelEntry &k, bool forGraph, CUlaunchAttribute out[3]) {
  unsigned n = 0;
  std::memset(out, 0, 3 * sizeof(CUlaunchAttribute));
  if (k.launchFlags & HJ_LAUNCH_COOPERATIVE) {
    out[n].id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
    out[n++].value.cooperative = 1;
  }
  if (k.clustered()) {
    out[n].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    out[n].value.clusterDim.x = k.cluster.x;
    out[n].value.clusterDim.y = k.cluster.y;
    out[n++].value.clusterDim.z = k.cluster.z;
  }
  if ((k.launchFlags & HJ_LAUNCH_PDL) && !forGraph) {
    out[n].id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    out[n++].value.programmaticStreamSerializationAllowed = 1;
  }
  return n;
}

int32_t CoResidency::check(const Driver &d, CUdevice dev, int32_t ordinal, const KernelEntry &k, const hj_dim3 &grid,
                           const hj_dim3 &block, uint32_t smem) {
  auto f = static_cast<CUfunction>(k.function);
  uint32_t threads = block.x * block.y * block.z;
  Key key{f, threads, smem};
  auto it = most_.find(key);
  if (it == most_.end()) {
    if (sms_ == 0) {
      int coop = 0;
      if (CUresult r = d.cuDeviceGetAttribute(&coop, CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH, dev))
        return fail(HJ_ERR_BACKEND, "cannot ask CUDA device %d whether it launches cooperative grids: %s", ordinal,
                    describe(d, r).c_str());
      if (!coop)
        return fail(HJ_ERR_INVALID_ARGUMENT, "kernel @%s is cooperative, and CUDA device %d cannot launch cooperative "
                    "grids", k.name.c_str(), ordinal);
      if (CUresult r = d.cuDeviceGetAttribute(&sms_, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev))
        return fail(HJ_ERR_BACKEND, "cannot read the multiprocessor count of CUDA device %d: %s", ordinal,
                    describe(d, r).c_str());
    }
    int perSm = 0;
    if (CUresult r = d.cuOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, f, static_cast<int>(threads), smem))
      return fail(HJ_ERR_BACKEND, "cannot compute the occupancy of cooperative kernel @%s block(%u, %u, %u) "
                  "smem(%u) on CUDA device %d: %s", k.name.c_str(), block.x, block.y, block.z, smem, ordinal,
                  describe(d, r).c_str());
    it = most_.emplace(key, uint64_t(perSm) * uint64_t(sms_)).first;
  }
  uint64_t blocks = uint64_t(grid.x) * grid.y * grid.z;
  if (blocks <= it->second) return HJ_OK;
  return fail(HJ_ERR_INVALID_ARGUMENT,
              "cooperative launch of @%s grid(%u, %u, %u) block(%u, %u, %u) smem(%u): %llu blocks cannot all be "
              "resident on CUDA device %d, which holds at most %llu of them at once (%d multiprocessors x %llu); a "
              "grid-wide barrier would never complete",
              k.name.c_str(), grid.x, grid.y, grid.z, block.x, block.y, block.z, smem, (unsigned long long)blocks,
              ordinal, (unsigned long long)it->second, sms_,
              (unsigned long long)(sms_ ? it->second / uint64_t(sms_) : 0));
}

}  // namespace hj

#endif  // HOSTJIT_HAVE_NVRTC
