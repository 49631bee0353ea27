// pipeline.cu - the three kernels of examples/pipeline.hir: scale_shift, row_sum and center.
//
// The CUDA versions of the host kernels of the same names
// (runtime/src/example_kernels.cpp). Element-wise arithmetic uses the _rn
// intrinsics so that no multiply-add is contracted into an FMA: scale_shift
// and center give bit-identical results to the host kernels. row_sum sums in a
// fixed order (deterministic), which may round differently from the host's
// serial sum.

// t[i] = x[i] * alpha + 1 for i < total. Launch: grid(ceildiv(total, 256)) block(256).
extern "C" __global__ void scale_shift(const float *x, float *t, long long total, float alpha) {
  const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < total) t[i] = __fadd_rn(__fmul_rn(x[i], alpha), 1.0f);
}

// Sums buf[0..blockDim.x) into buf[0] (a power-of-two tree).
static __device__ void blockTreeSum(float *buf) {
  for (unsigned stride = blockDim.x / 2; stride > 0; stride >>= 1) {
    if (threadIdx.x < stride) buf[threadIdx.x] += buf[threadIdx.x + stride];
    __syncthreads();
  }
}

// s[r] = sum of row r of t[rows, cols]. Launch: grid(ceildiv(cols, 256), rows)
// block(256); blockDim.x must be a power of two no larger than 256. Block
// (bx, r) sums its blockDim.x columns of row r into work[r * gridDim.x + bx]
// and counts itself on sem[r]; the last block of the row sums the row's
// partials into s[r]. The semaphore is not reset: it is zero_init without
// resets_to_zero, so the runtime zeroes it before every launch.
extern "C" __global__ void row_sum(const float *t, float *s, float *work, int *sem, long long rows, long long cols) {
  __shared__ float buf[256];
  __shared__ bool last;
  const long long r = blockIdx.y;
  if (r >= rows) return;  // the whole block leaves together
  const unsigned tid = threadIdx.x;
  const long long per = gridDim.x;
  const long long j = (long long)blockIdx.x * blockDim.x + tid;
  buf[tid] = j < cols ? t[r * cols + j] : 0.0f;
  __syncthreads();
  blockTreeSum(buf);
  if (tid == 0) {
    work[r * per + blockIdx.x] = buf[0];
    __threadfence();  // publish the partial before counting this block as arrived
    last = atomicAdd(&sem[r], 1) == (int)(per - 1);
  }
  __syncthreads();
  if (!last) return;

  // The last block of row r: read the row's partials through volatile so no
  // stale L1 line is used, in a fixed order.
  __threadfence();
  const volatile float *partials = work + r * per;
  float acc = 0.0f;
  for (long long b = tid; b < per; b += blockDim.x) acc += partials[b];
  buf[tid] = acc;
  __syncthreads();
  blockTreeSum(buf);
  if (tid == 0) s[r] = buf[0];
}

// y[r, j] = t[r, j] - s[r] / cols. Launch: grid(ceildiv(cols, 256), rows) block(256).
extern "C" __global__ void center(const float *t, const float *s, float *y, long long rows, long long cols) {
  const long long r = blockIdx.y;
  const long long j = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows && j < cols) y[r * cols + j] = __fsub_rn(t[r * cols + j], __fdiv_rn(s[r], (float)cols));
}
