// watchdog.cu - kernels for the communicator watchdog's tests: one that keeps
// its stream busy for a while, and a fill that depends on the rank.
#include <stdint.h>

__device__ uint64_t nowNs() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Spins for `ns` nanoseconds of the GPU's clock, then writes out[0] (so the
// wait is work the stream must finish).
extern "C" __global__ void hold(float *out, int64_t ns) {
  uint64_t start = nowNs();
  while (nowNs() - start < static_cast<uint64_t>(ns)) {
  }
  if (threadIdx.x == 0) out[0] = 1.0f;
}

// out[i] = (rank + 1) * (i + 1).
extern "C" __global__ void fill_rank(float *out, int64_t n, int64_t rank) {
  int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = float((rank + 1) * (i + 1));
}
