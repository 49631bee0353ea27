// grid_barrier.cu - a kernel that waits at a grid-wide barrier, so it is
// correct only as a cooperative launch (every block resident at once): each
// block sums its slice of x into partial[block], all blocks meet, then each
// block sums the partials and block b writes the total to out[b]. The two
// counters in bar count arrivals and departures; the last block to leave
// sets both back to zero, so bar is zero_init resets_to_zero.
extern "C" __global__ void coop_sum(const float *x, float *out, float *partial, unsigned *bar, long long n) {
  __shared__ float acc[256];
  float s = 0.0f;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
    s += x[i];
  acc[threadIdx.x] = s;
  __syncthreads();
  for (unsigned w = blockDim.x / 2; w > 0; w /= 2) {
    if (threadIdx.x < w) acc[threadIdx.x] += acc[threadIdx.x + w];
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    partial[blockIdx.x] = acc[0];
    __threadfence();
    atomicAdd(&bar[0], 1u);
    while (atomicAdd(&bar[0], 0u) < gridDim.x) {
    }
    __threadfence();
  }
  __syncthreads();
  float total = 0.0f;
  if (threadIdx.x == 0) {
    for (unsigned b = 0; b < gridDim.x; ++b) total += ((volatile float *)partial)[b];
    out[blockIdx.x] = total;
    if (atomicAdd(&bar[1], 1u) == gridDim.x - 1) {
      bar[0] = 0;
      bar[1] = 0;
    }
  }
}
