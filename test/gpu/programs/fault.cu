// fault.cu - kernels for the device-fault tests: a copy, and a kernel that traps.
#include <stdint.h>

extern "C" __global__ void copy_f32(const float *from, float *to, int64_t n) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
    to[i] = from[i];
}

// Faults the way a kernel with a broken contract does: the context is lost.
extern "C" __global__ void trap_kernel(float *x) {
  if (threadIdx.x == 0) __trap();
}
