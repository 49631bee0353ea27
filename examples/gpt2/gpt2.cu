// gpt2.cu - the kernels of GPT-2's forward pass besides its matmuls (which
// are library calls): token and position embedding, layer norm, splitting
// and merging attention heads, causal softmax, GELU. f32; the host versions
// in host_kernels.cpp compute the same.
#include <math.h>

// x[r, j] = wte[tokens[r], j] + wpe[r % t, j] for the n = b * t rows; a token
// outside the vocabulary, or a position past the context, gives NaN.
extern "C" __global__ void gpt2_embed(const long long *tokens, const float *wte, const float *wpe, float *x,
                                      long long n, long long t, long long c, long long vocab, long long context) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i >= n * c) return;
  long long r = i / c, j = i % c, tok = tokens[r], pos = r % t;
  x[i] = tok >= 0 && tok < vocab && pos < context ? wte[tok * c + j] + wpe[pos * c + j] : __int_as_float(0x7fc00000);
}

// y = (x - mean) / sqrt(var + 1e-5) * w + b over each row of c; one block
// of 256 threads per row.
extern "C" __global__ void gpt2_layernorm(const float *x, const float *w, const float *b, float *y, long long n,
                                          long long c) {
  __shared__ float part[256];
  long long r = blockIdx.x;
  const float *row = x + r * c;
  float s = 0.0f;
  for (long long j = threadIdx.x; j < c; j += blockDim.x) s += row[j];
  part[threadIdx.x] = s;
  __syncthreads();
  for (unsigned k = blockDim.x / 2; k > 0; k /= 2) {
    if (threadIdx.x < k) part[threadIdx.x] += part[threadIdx.x + k];
    __syncthreads();
  }
  float mean = part[0] / c;
  __syncthreads();
  float v = 0.0f;
  for (long long j = threadIdx.x; j < c; j += blockDim.x) v += (row[j] - mean) * (row[j] - mean);
  part[threadIdx.x] = v;
  __syncthreads();
  for (unsigned k = blockDim.x / 2; k > 0; k /= 2) {
    if (threadIdx.x < k) part[threadIdx.x] += part[threadIdx.x + k];
    __syncthreads();
  }
  float rstd = rsqrtf(part[0] / c + 1e-5f);
  for (long long j = threadIdx.x; j < c; j += blockDim.x) y[r * c + j] = (row[j] - mean) * rstd * w[j] + b[j];
}

// qkv [b * t, 3 * h * d] -> q, k, v [b * h, t, d]: head hh of token (bb, tt).
extern "C" __global__ void gpt2_split_heads(const float *qkv, float *q, float *k, float *v, long long b, long long t,
                                            long long h, long long d) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x, c = h * d;
  if (i >= b * t * c) return;
  long long dd = i % d, hh = (i / d) % h, tt = (i / c) % t, bb = i / (c * t);
  long long src = (bb * t + tt) * 3 * c + hh * d + dd, dst = ((bb * h + hh) * t + tt) * d + dd;
  q[dst] = qkv[src];
  k[dst] = qkv[src + c];
  v[dst] = qkv[src + 2 * c];
}

// The inverse: yh [b * h, t, d] -> y [b * t, h * d].
extern "C" __global__ void gpt2_merge_heads(const float *yh, float *y, long long b, long long t, long long h,
                                            long long d) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x, c = h * d;
  if (i >= b * t * c) return;
  long long dd = i % d, hh = (i / d) % h, tt = (i / c) % t, bb = i / (c * t);
  y[i] = yh[((bb * h + hh) * t + tt) * d + dd];
}

// In place, each of the `rows` rows of t scores (row r is query r % t):
// softmax over the keys 0..r % t, 0 for the later ones. One block of 256
// threads per row.
extern "C" __global__ void gpt2_causal_softmax(float *att, long long rows, long long t) {
  __shared__ float part[256];
  long long r = blockIdx.x, last = r % t;
  float *row = att + r * t;
  float m = -INFINITY;
  for (long long j = threadIdx.x; j <= last; j += blockDim.x) m = fmaxf(m, row[j]);
  part[threadIdx.x] = m;
  __syncthreads();
  for (unsigned k = blockDim.x / 2; k > 0; k /= 2) {
    if (threadIdx.x < k) part[threadIdx.x] = fmaxf(part[threadIdx.x], part[threadIdx.x + k]);
    __syncthreads();
  }
  m = part[0];
  __syncthreads();
  float s = 0.0f;
  for (long long j = threadIdx.x; j <= last; j += blockDim.x) s += expf(row[j] - m);
  part[threadIdx.x] = s;
  __syncthreads();
  for (unsigned k = blockDim.x / 2; k > 0; k /= 2) {
    if (threadIdx.x < k) part[threadIdx.x] += part[threadIdx.x + k];
    __syncthreads();
  }
  float inv = 1.0f / part[0];
  for (long long j = threadIdx.x; j < t; j += blockDim.x) row[j] = j <= last ? expf(row[j] - m) * inv : 0.0f;
}

// In place: GELU with the tanh approximation GPT-2 uses.
extern "C" __global__ void gpt2_gelu(float *x, long long n) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = x[i];
  x[i] = 0.5f * v * (1.0f + tanhf(0.7978845608028654f * (v + 0.044715f * v * v * v)));
}
