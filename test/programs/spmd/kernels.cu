// kernels.cu - the CUDA kernels of the SPMD test programs (their host
// versions are in test/kernels/test_kernels.cpp).
#include <stdint.h>

// out[i] = rank * 1000 + i + 1.
extern "C" __global__ void fill_rank(float *out, int64_t n, int64_t rank) {
  int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = float(rank * 1000 + i + 1);
}

// c = a (m x k) times b (k x n); row i of the product goes to row
// (i / block) * stride + offset + i % block of c. One thread per element.
extern "C" __global__ void matmul_rows(const float *a, const float *b, float *c, int64_t m, int64_t k, int64_t n,
                                       int64_t block, int64_t stride, int64_t offset) {
  int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (e >= m * n) return;
  int64_t i = e / n, j = e % n;
  float acc = 0;
  for (int64_t t = 0; t < k; ++t) acc += a[i * k + t] * b[t * n + j];
  c[((i / block) * stride + offset + i % block) * n + j] = acc;
}

// dst = rows [first, first + rows) of src (cols wide).
extern "C" __global__ void copy_rows(const float *src, float *dst, int64_t first, int64_t rows, int64_t cols) {
  int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < rows * cols) dst[i] = src[first * cols + i];
}
