// vector.cu - elementwise kernels of the loop and streams examples: one
// thread per element; launch grid(ceildiv(total, 256)) block(256). Their
// host versions are in host_kernels.cpp.

// y[i] = x[i].
extern "C" __global__ void copy_vec(const float *x, float *y, long long total) {
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < total) y[i] = x[i];
}

// next[i] = w * cur[i] + x[i]: one step of an iterated relaxation.
extern "C" __global__ void relax_step(const float *cur, float *next, const float *x, long long total, float w) {
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < total) next[i] = w * cur[i] + x[i];
}

// y[i] = alpha * x[i].
extern "C" __global__ void scale_vec(const float *x, float *y, long long total, float alpha) {
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < total) y[i] = alpha * x[i];
}

// y[i] = a[i] + b[i].
extern "C" __global__ void add_vec(const float *a, const float *b, float *y, long long total) {
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < total) y[i] = a[i] + b[i];
}
