// fusions.cu - the CUDA kernels of the example fusions: row_sum_grid, splitk_gemm, chain and scalars.
//
// The host versions, with the same names and results, are in
// examples/fusions/host_kernels.cpp. Element-wise arithmetic uses the _rn
// intrinsics so that nothing is contracted into an FMA. Every kernel checks
// its own contract (written above it): a launch, shape or semaphore that
// breaks it makes the kernel write NaN into its outputs; no kernel waits on
// anything that a broken contract could keep from happening.
#include <stdint.h>

#include "tensor.h"

static __device__ float qnan() { return __int_as_float(0x7fffffff); }

// gridDim == (gx, gy, 1) and blockDim == (bx, 1, 1).
static __device__ bool launchIs(int64_t gx, int64_t gy, int64_t bx) {
  return (int64_t)gridDim.x == gx && (int64_t)gridDim.y == gy && gridDim.z == 1 && (int64_t)blockDim.x == bx &&
         blockDim.y == 1 && blockDim.z == 1;
}

// This thread's index among threadIdx.x of all blocks, and their number.
static __device__ int64_t gridThread() {
  return (((int64_t)blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x) * blockDim.x + threadIdx.x;
}
static __device__ int64_t gridThreads() { return (int64_t)gridDim.x * gridDim.y * gridDim.z * blockDim.x; }

// All blocks together: p[0..n) = NaN, whatever the launch.
static __device__ void fillNaN(float *p, int64_t n) {
  for (int64_t i = gridThread(); i < n; i += gridThreads()) p[i] = qnan();
}

// Whether p[0..pn) and q[0..qn) share memory.
static __device__ bool overlap(const float *p, int64_t pn, const float *q, int64_t qn) {
  return pn > 0 && qn > 0 && p < q + qn && q < p + pn;
}

// Sums buf[0..256) into buf[0] (a power-of-two tree; blockDim.x == 256).
static __device__ void blockTreeSum(float *buf) {
  for (unsigned stride = 128; stride > 0; stride >>= 1) {
    if (threadIdx.x < stride) buf[threadIdx.x] += buf[threadIdx.x + stride];
    __syncthreads();
  }
}

// row_sum_grid: y[r] = sum over c of xt[r, c], R = xt.sizes[0], C = xt.sizes[1],
// xt read through its strides (a permuted view).
// Contract: launch grid(per_row, R) block(256) with per_row == ceildiv(C, 256);
// work holds R * per_row floats; sem holds R ints that are zero when the
// kernel starts (zero_init). The kernel leaves sem[r] == per_row (it is not
// resets_to_zero: the runtime zeroes it before every launch).
// Block (bx, r) sums columns [bx * 256, min(bx * 256 + 256, C)) into
// work[r * per_row + bx] and draws a ticket from sem[r]; the block with ticket
// per_row - 1 sums the row's partials in order into y[r].
// Checks: a wrong launch writes NaN to all of y. A ticket outside
// [0, per_row) means sem[r] did not start at zero: that block writes
// y[r] = NaN. The last block re-reads sem[r] after storing y[r] and writes
// NaN unless it is still per_row; so if any block drew a bad ticket, y[r] ends
// NaN whichever order the blocks ran in.
extern "C" __global__ void row_sum_grid(Tensor<float, 2> xt, float *y, float *work, int32_t *sem, int64_t per_row) {
  __shared__ float buf[256];
  __shared__ int32_t ticket;
  const int64_t R = xt.sizes[0], C = xt.sizes[1];
  if (per_row != (C + 255) / 256 || !launchIs(per_row, R, 256)) {
    fillNaN(y, R);
    return;
  }
  const unsigned tid = threadIdx.x;
  const int64_t r = blockIdx.y, c = (int64_t)blockIdx.x * 256 + tid;
  buf[tid] = c < C ? xt.data[r * xt.strides[0] + c * xt.strides[1]] : 0.0f;
  __syncthreads();
  blockTreeSum(buf);
  if (tid == 0) {
    work[r * per_row + blockIdx.x] = buf[0];
    __threadfence();  // publish the partial before drawing the ticket
    ticket = atomicAdd(&sem[r], 1);
    __threadfence();
  }
  __syncthreads();
  if (tid != 0) return;
  if (ticket < 0 || ticket >= per_row) {
    y[r] = qnan();
    return;
  }
  if (ticket != per_row - 1) return;
  const volatile float *partials = work + r * per_row;  // volatile: no stale L1 line
  float sum = 0.0f;
  for (int64_t b = 0; b < per_row; ++b) sum = __fadd_rn(sum, partials[b]);
  y[r] = sum;
  __threadfence();
  if (atomicAdd(&sem[r], 0) != per_row) y[r] = qnan();
}

// splitk_gemm: c[m, n] = a[m, k] @ b[k, n], all three read through their
// strides; M = a.sizes[0], K = a.sizes[1], N = b.sizes[1].
// Contract: b.sizes[0] == K, c.sizes == {M, N}, splits >= 1; launch
// grid(tiles, splits) block(256), tiles = ceildiv(M * N, 256); sem holds tiles
// ints that are zero when the kernel starts, and the kernel leaves them zero
// (zero_init, resets_to_zero: the zeroed arena, no memset).
// As examples/kernels/splitk_matmul.cu: block (t, s) computes the partial of
// its 256 outputs over the s-th slice of k (chunk = ceildiv(K, splits), k in
// increasing order), waits until sem[t] == s, stores (s == 0) or adds it, and
// hands the tile on to s + 1; the last slice sets sem[t] back to 0.
// Checks: a wrong shape or launch writes NaN to all of c and leaves sem alone.
// A waiting block that sees sem[t] < 0 or > s (so also >= splits) knows the
// semaphore did not start at zero: it sets sem[t] to -1 and writes NaN to its
// outputs. Every block that looks later sees -1 and does the same, so none
// waits for a turn that never comes. Turns are handed on with atomicCAS; a
// block whose hand-over fails (sem[t] became -1 meanwhile) writes NaN over its
// outputs. So once any block of a tile has failed, the tile ends NaN whichever
// order its blocks ran in. Not caught: a semaphore starting at v in
// (0, splits) where slices v..splits-1 all finish before any of slices
// 0..v-1 first looks (the tile then holds slices 0..v-1 only, and sem[t] is
// left at v, which every later call sees).
extern "C" __global__ void splitk_gemm(Tensor<float, 2> a, Tensor<float, 2> b, Tensor<float, 2> c, int32_t *sem,
                                       int64_t splits) {
  __shared__ bool failed;
  const int64_t M = a.sizes[0], K = a.sizes[1], N = b.sizes[1], tiles = (M * N + 255) / 256;
  if (splits < 1 || b.sizes[0] != K || c.sizes[0] != M || c.sizes[1] != N || !launchIs(tiles, splits, 256)) {
    const int64_t cn = c.sizes[1];
    for (int64_t o = gridThread(); o < c.sizes[0] * cn; o += gridThreads())
      c.data[o / cn * c.strides[0] + o % cn * c.strides[1]] = qnan();
    return;
  }
  const int64_t t = blockIdx.x, s = blockIdx.y, o = t * 256 + threadIdx.x;
  const bool active = o < M * N;
  const int64_t i = active ? o / N : 0, j = active ? o % N : 0;
  const int64_t chunk = (K + splits - 1) / splits, lo = s * chunk, hi = lo + chunk < K ? lo + chunk : K;
  float acc = 0.0f;
  if (active)
    for (int64_t kk = lo; kk < hi; ++kk)
      acc = __fadd_rn(acc, __fmul_rn(a.data[i * a.strides[0] + kk * a.strides[1]],
                                     b.data[kk * b.strides[0] + j * b.strides[1]]));
  volatile float *out = c.data + i * c.strides[0] + j * c.strides[1];  // volatile: no stale L1 line

  if (threadIdx.x == 0) {
    int32_t v;
    while ((v = atomicAdd(&sem[t], 0)) >= 0 && v < s) {
    }
    failed = v != s;
    if (failed) atomicExch(&sem[t], -1);
    __threadfence();  // see the previous slice's stores (or order our NaN after them)
  }
  __syncthreads();
  if (failed) {
    if (active) *out = qnan();
    return;
  }
  if (active) *out = s == 0 ? acc : __fadd_rn(*out, acc);
  __threadfence();  // publish this slice's stores before handing the tile on
  __syncthreads();
  if (threadIdx.x == 0) failed = atomicCAS(&sem[t], (int32_t)s, s + 1 == splits ? 0 : (int32_t)(s + 1)) != s;
  __syncthreads();
  if (failed && active) *out = qnan();
}

// scale_shift2d (chain, 1 of 3): t[r * 16 + j] = x[r, j] * alpha + 1, x read
// through its strides, t contiguous [R, 16], R = x.sizes[0].
// Contract: x.sizes[1] == 16; launch grid(ceildiv(R * 16, 256)) block(256).
// Checks: otherwise writes NaN to t[0..R * 16).
extern "C" __global__ void scale_shift2d(Tensor<float, 2> x, float *t, float alpha) {
  const int64_t n = x.sizes[0] * 16;
  if (x.sizes[1] != 16 || !launchIs((n + 255) / 256, 1, 256)) {
    fillNaN(t, n);
    return;
  }
  const int64_t i = (int64_t)blockIdx.x * 256 + threadIdx.x;
  if (i < n) t[i] = __fadd_rn(__fmul_rn(x.data[i / 16 * x.strides[0] + i % 16 * x.strides[1]], alpha), 1.0f);
}

// col_mean (chain, 2 of 3): m[j] = mean over r of t[r * 16 + j], t contiguous
// [rows, 16].
// Contract: launch grid(blocks) block(256), blocks = ceildiv(rows, 16); work
// holds blocks * 16 floats; sem[0] is zero when the kernel starts (zero_init;
// the kernel leaves it at blocks, so not resets_to_zero).
// Block b sums rows [b * 16, min(b * 16 + 16, rows)) of each column j in row
// order into work[b * 16 + j] and draws a ticket from sem[0]; the block with
// ticket blocks - 1 sets m[j] = (sum over b in order of work[b * 16 + j]) / rows.
// Checks: a wrong launch writes NaN to m. A ticket outside [0, blocks) means
// sem[0] did not start at zero: that block writes NaN to m. The last block
// re-reads sem[0] after storing m and writes NaN unless it is still blocks.
extern "C" __global__ void col_mean(const float *t, float *m, float *work, int32_t *sem, int64_t rows) {
  __shared__ float means[16];
  __shared__ int32_t ticket;
  const int64_t blocks = (rows + 15) / 16;
  if (!launchIs(blocks, 1, 256)) {
    fillNaN(m, 16);
    return;
  }
  const unsigned j = threadIdx.x;
  const int64_t b = blockIdx.x, end = b * 16 + 16 < rows ? b * 16 + 16 : rows;
  if (j < 16) {
    float acc = 0.0f;
    for (int64_t r = b * 16; r < end; ++r) acc = __fadd_rn(acc, t[r * 16 + j]);
    work[b * 16 + j] = acc;
    __threadfence();  // publish the partial before the ticket is drawn
  }
  __syncthreads();
  if (j == 0) {
    ticket = atomicAdd(sem, 1);
    __threadfence();
  }
  __syncthreads();
  if (ticket < 0 || ticket >= blocks) {
    if (j < 16) m[j] = qnan();
    return;
  }
  if (ticket != blocks - 1) return;
  if (j < 16) {
    const volatile float *partials = work;  // volatile: no stale L1 line
    float acc = 0.0f;
    for (int64_t p = 0; p < blocks; ++p) acc = __fadd_rn(acc, partials[p * 16 + j]);
    means[j] = __fdiv_rn(acc, (float)rows);
  }
  __syncthreads();
  if (j != 0) return;
  for (int q = 0; q < 16; ++q) m[q] = means[q];
  __threadfence();
  if (atomicAdd(sem, 0) != blocks)
    for (int q = 0; q < 16; ++q) m[q] = qnan();
}

// center_bcast (chain, 3 of 3): y[r * 16 + j] = t[r, j] - m[j], t read through
// its strides (sizes {R, 16}), y contiguous; m reaches y through bc, an
// expanded broadcast intermediate of 16 floats.
// Contract: t.sizes[1] == 16; launch grid(ceildiv(R * 16, 256)) block(256);
// bc.sizes == {64, 32, 16} and bc.strides == {0, 0, 1}.
// Each block stores m into bc (every block the same values), then reads
// y[i] = t[r, j] - bc[r % 64, r % 32, j] through bc's strides.
// Checks: a wrong shape or launch writes NaN to all of y; a bc with other
// sizes or strides makes every block write NaN to its elements of y (and
// nothing touches bc).
extern "C" __global__ void center_bcast(Tensor<float, 2> t, const float *m, float *y, Tensor<float, 3> bc) {
  const int64_t n = t.sizes[0] * 16;
  if (t.sizes[1] != 16 || !launchIs((n + 255) / 256, 1, 256)) {
    fillNaN(y, n);
    return;
  }
  const int64_t i = (int64_t)blockIdx.x * 256 + threadIdx.x, r = i / 16, j = i % 16;
  if (bc.sizes[0] != 64 || bc.sizes[1] != 32 || bc.sizes[2] != 16 || bc.strides[0] != 0 || bc.strides[1] != 0 ||
      bc.strides[2] != 1) {
    if (i < n) y[i] = qnan();
    return;
  }
  if (threadIdx.x < 16) bc.data[threadIdx.x * bc.strides[2]] = m[threadIdx.x];
  __syncthreads();
  if (i < n)
    y[i] = __fsub_rn(t.data[r * t.strides[0] + j * t.strides[1]],
                     bc.data[r % 64 * bc.strides[0] + r % 32 * bc.strides[1] + j * bc.strides[2]]);
}

// tile_axpy (scalars, 1 of 2): y[i] = x[i % L] * beta + (float)(i / L) for
// i < n, L = x.sizes[0], x read through its stride.
// Contract: L >= 1 and n is a multiple of L (n = L * k); launch
// grid(ceildiv(n, 128)) block(128).
// Checks: otherwise writes NaN to y[0..n).
extern "C" __global__ void tile_axpy(Tensor<float, 1> x, float *y, int64_t n, float beta) {
  const int64_t L = x.sizes[0];
  if (L < 1 || n % L != 0 || !launchIs((n + 127) / 128, 1, 128)) {
    fillNaN(y, n);
    return;
  }
  const int64_t i = (int64_t)blockIdx.x * 128 + threadIdx.x;
  if (i < n) y[i] = __fadd_rn(__fmul_rn(x.data[i % L * x.strides[0]], beta), (float)(i / L));
}

// window_sum (scalars, 2 of 2): for i < count, scratch[i * k + j] = y[i * k + j]
// for j < k, then z[i] = sum over j < k in order of scratch[i * k + j].
// Contract: k >= 0; launch grid(ceildiv(count, 128)) block(128); scratch is
// an intermediate [count, k] of its own (plain: each thread writes its part
// before reading it), overlapping neither y nor z.
// Checks: otherwise writes NaN to z[0..count).
extern "C" __global__ void window_sum(const float *y, float *z, float *scratch, int64_t count, int64_t k) {
  const int64_t n = count * k;
  if (k < 0 || overlap(scratch, n, y, n) || overlap(scratch, n, z, count) || !launchIs((count + 127) / 128, 1, 128)) {
    fillNaN(z, count);
    return;
  }
  const int64_t i = (int64_t)blockIdx.x * 128 + threadIdx.x;
  if (i >= count) return;
  for (int64_t j = 0; j < k; ++j) scratch[i * k + j] = y[i * k + j];
  float acc = 0.0f;
  for (int64_t j = 0; j < k; ++j) acc = __fadd_rn(acc, scratch[i * k + j]);
  z[i] = acc;
}
