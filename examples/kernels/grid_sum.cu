// grid_sum.cu - y[0] = sum of x[0..total): a grid reduction through a work buffer and a self-resetting semaphore.
//
// The CUDA version of the host kernel grid_sum (runtime/src/example_kernels.cpp):
// each block sums blockDim.x elements into work[blockIdx.x]; the block that
// arrives last at the semaphore sums the work buffer into y[0] and leaves the
// semaphore at zero, so it can live in the zeroed arena (resets_to_zero).
// Launch: grid(ceildiv(total, 256)) block(256); blockDim.x must be a power of
// two no larger than 256. Sums are formed in a fixed order (a tree per block,
// then a fixed strided-plus-tree order over the work buffer), so the result is
// deterministic, though it may round differently from the host's serial sum.

// Sums buf[0..blockDim.x) into buf[0] (a power-of-two tree).
static __device__ void blockTreeSum(float *buf) {
  for (unsigned stride = blockDim.x / 2; stride > 0; stride >>= 1) {
    if (threadIdx.x < stride) buf[threadIdx.x] += buf[threadIdx.x + stride];
    __syncthreads();
  }
}

extern "C" __global__ void grid_sum(const float *x, float *y, float *work, int *sem, long long total) {
  __shared__ float buf[256];
  __shared__ bool last;
  const unsigned tid = threadIdx.x;
  const long long i = (long long)blockIdx.x * blockDim.x + tid;
  buf[tid] = i < total ? x[i] : 0.0f;
  __syncthreads();
  blockTreeSum(buf);
  if (tid == 0) {
    work[blockIdx.x] = buf[0];
    __threadfence();  // publish the partial before counting this block as arrived
    last = atomicAdd(sem, 1) == (int)gridDim.x - 1;
  }
  __syncthreads();
  if (!last) return;

  // The last block: every other block's partial is visible (each fenced
  // before its atomicAdd). Read through volatile so no stale L1 line is used.
  __threadfence();
  const volatile float *partials = work;
  float acc = 0.0f;
  for (unsigned b = tid; b < gridDim.x; b += blockDim.x) acc += partials[b];
  buf[tid] = acc;
  __syncthreads();
  blockTreeSum(buf);
  if (tid == 0) {
    y[0] = buf[0];
    atomicExch(sem, 0);  // every block has arrived: leave the semaphore zero
  }
}
