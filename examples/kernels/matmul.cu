// matmul.cu - c = a (m x k) times b (k x n), row-major, for the SPMD
// example: one thread per element of c; launch grid(ceildiv(m * n, 256))
// block(256). Its host version is in host_kernels.cpp.
extern "C" __global__ void matmul_f32(const float *a, const float *b, float *c, long long m, long long k, long long n) {
  long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (e >= m * n) return;
  long long i = e / n, j = e % n;
  float acc = 0.0f;
  for (long long t = 0; t < k; ++t) acc += a[i * k + t] * b[t * n + j];
  c[e] = acc;
}
