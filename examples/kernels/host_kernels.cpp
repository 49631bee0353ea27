// host_kernels.cpp - host versions of the examples' kernels (grid_sum,
// splitk, pipeline, the loop, streams and SPMD examples), written as a GPU
// runs them.
//
// Block by block, each block using the work buffers and semaphores exactly as
// the CUDA versions beside this file do. Built, with the fusion examples'
// kernels, into the host-kernel library hostjit_example_kernels, which the
// demo, the tests and `hostjit run --host-kernels` load like any user's.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>

#include "hostjit/runtime.h"
#include "host_params.h"

using hostjit_examples::arg;

extern "C" {

// grid_sum(x, y, work, sem, total): each block sums blockDim.x elements into
// work[block]; the block that arrives last at the semaphore sums the work
// buffer into y[0] and resets the semaphore to zero.
void grid_sum(const hj_dim3 *grid, const hj_dim3 *block, uint32_t, void **p) {
  auto *x = arg<const float *>(p, 0);
  auto *y = arg<float *>(p, 1);
  auto *work = arg<float *>(p, 2);
  auto *sem = arg<int32_t *>(p, 3);
  int64_t total = arg<int64_t>(p, 4);
  int64_t blocks = grid->x, bx = block->x;
  for (int64_t b = 0; b < blocks; ++b) {
    float partial = 0.0f;
    for (int64_t i = b * bx; i < std::min((b + 1) * bx, total); ++i) partial += x[i];
    work[b] = partial;
    int32_t arrived = (*sem)++;  // atomicAdd on the GPU
    if (arrived == blocks - 1) {
      float sum = 0.0f;
      for (int64_t i = 0; i < blocks; ++i) sum += work[i];
      y[0] = sum;
      *sem = 0;
    }
  }
}

// splitk_matmul(a, b, c, sem, m, n, k, splits): c[m, n] = a[m, k] @ b[k, n].
// Block (t, s) covers blockDim.x outputs of tile t and the s-th slice of k.
// Slices of a tile are serialised on sem[t]: slice s waits for sem[t] == s,
// adds its partial, and moves the semaphore on; the last slice resets it to
// zero. A semaphore that does not start at zero would hang on a GPU; here
// the tile is poisoned with NaN instead.
void splitk_matmul(const hj_dim3 *grid, const hj_dim3 *block, uint32_t, void **p) {
  auto *a = arg<const float *>(p, 0);
  auto *b = arg<const float *>(p, 1);
  auto *c = arg<float *>(p, 2);
  auto *sem = arg<int32_t *>(p, 3);
  int64_t m = arg<int64_t>(p, 4), n = arg<int64_t>(p, 5), k = arg<int64_t>(p, 6), splits = arg<int64_t>(p, 7);
  int64_t bx = block->x, chunk = (k + splits - 1) / splits;
  for (int64_t s = 0; s < int64_t(grid->y); ++s) {
    for (int64_t t = 0; t < int64_t(grid->x); ++t) {
      int64_t lo = t * bx, hi = std::min(lo + bx, m * n);
      if (sem[t] != s) {
        for (int64_t o = lo; o < hi; ++o) c[o] = std::numeric_limits<float>::quiet_NaN();
        continue;
      }
      for (int64_t o = lo; o < hi; ++o) {
        int64_t i = o / n, j = o % n;
        float acc = 0.0f;
        for (int64_t kk = s * chunk; kk < std::min((s + 1) * chunk, k); ++kk) acc += a[i * k + kk] * b[kk * n + j];
        c[o] = s == 0 ? acc : c[o] + acc;
      }
      sem[t] = s + 1 == splits ? 0 : int32_t(s + 1);
    }
  }
}

// scale_shift(x, t, total, alpha): t = x * alpha + 1.
void scale_shift(const hj_dim3 *grid, const hj_dim3 *block, uint32_t, void **p) {
  auto *x = arg<const float *>(p, 0);
  auto *t = arg<float *>(p, 1);
  int64_t total = arg<int64_t>(p, 2);
  float alpha = arg<float>(p, 3);
  int64_t end = std::min<int64_t>(int64_t(grid->x) * block->x, total);
  for (int64_t i = 0; i < end; ++i) t[i] = x[i] * alpha + 1.0f;
}

// row_sum(t, s, work, sem, rows, cols): block (bx, r) sums its chunk of row r
// into work[r * gridDim.x + bx] and counts itself on sem[r]; the last block of
// a row writes s[r]. The semaphore is not reset (zero_init alone: the
// runtime zeroes it for every call).
void row_sum(const hj_dim3 *grid, const hj_dim3 *block, uint32_t, void **p) {
  auto *t = arg<const float *>(p, 0);
  auto *s = arg<float *>(p, 1);
  auto *work = arg<float *>(p, 2);
  auto *sem = arg<int32_t *>(p, 3);
  int64_t rows = arg<int64_t>(p, 4), cols = arg<int64_t>(p, 5);
  int64_t per = grid->x, bx = block->x;
  for (int64_t r = 0; r < std::min<int64_t>(rows, grid->y); ++r) {
    for (int64_t b = 0; b < per; ++b) {
      float partial = 0.0f;
      for (int64_t j = b * bx; j < std::min((b + 1) * bx, cols); ++j) partial += t[r * cols + j];
      work[r * per + b] = partial;
      if (sem[r]++ == per - 1) {
        float sum = 0.0f;
        for (int64_t i = 0; i < per; ++i) sum += work[r * per + i];
        s[r] = sum;
      }
    }
  }
}

// center(t, s, y, rows, cols): y[r, c] = t[r, c] - s[r] / cols.
void center(const hj_dim3 *grid, const hj_dim3 *block, uint32_t, void **p) {
  auto *t = arg<const float *>(p, 0);
  auto *s = arg<const float *>(p, 1);
  auto *y = arg<float *>(p, 2);
  int64_t rows = arg<int64_t>(p, 3), cols = arg<int64_t>(p, 4);
  int64_t end = std::min<int64_t>(int64_t(grid->x) * block->x, cols);
  for (int64_t r = 0; r < std::min<int64_t>(rows, grid->y); ++r)
    for (int64_t j = 0; j < end; ++j) y[r * cols + j] = t[r * cols + j] - s[r] / float(cols);
}

// The elements one grid of `block` threads covers, at most total.
static int64_t covered(const hj_dim3 *grid, const hj_dim3 *block, int64_t total) {
  return std::min<int64_t>(int64_t(grid->x) * block->x, total);
}

// copy_vec(x, y, total): y = x.
void copy_vec(const hj_dim3 *grid, const hj_dim3 *block, uint32_t, void **p) {
  auto *x = arg<const float *>(p, 0);
  auto *y = arg<float *>(p, 1);
  int64_t n = covered(grid, block, arg<int64_t>(p, 2));
  for (int64_t i = 0; i < n; ++i) y[i] = x[i];
}

// relax_step(cur, next, x, total, w): next = w * cur + x.
void relax_step(const hj_dim3 *grid, const hj_dim3 *block, uint32_t, void **p) {
  auto *cur = arg<const float *>(p, 0);
  auto *next = arg<float *>(p, 1);
  auto *x = arg<const float *>(p, 2);
  int64_t n = covered(grid, block, arg<int64_t>(p, 3));
  float w = arg<float>(p, 4);
  for (int64_t i = 0; i < n; ++i) next[i] = w * cur[i] + x[i];
}

// scale_vec(x, y, total, alpha): y = alpha * x.
void scale_vec(const hj_dim3 *grid, const hj_dim3 *block, uint32_t, void **p) {
  auto *x = arg<const float *>(p, 0);
  auto *y = arg<float *>(p, 1);
  int64_t n = covered(grid, block, arg<int64_t>(p, 2));
  float alpha = arg<float>(p, 3);
  for (int64_t i = 0; i < n; ++i) y[i] = alpha * x[i];
}

// add_vec(a, b, y, total): y = a + b.
void add_vec(const hj_dim3 *grid, const hj_dim3 *block, uint32_t, void **p) {
  auto *a = arg<const float *>(p, 0);
  auto *b = arg<const float *>(p, 1);
  auto *y = arg<float *>(p, 2);
  int64_t n = covered(grid, block, arg<int64_t>(p, 3));
  for (int64_t i = 0; i < n; ++i) y[i] = a[i] + b[i];
}

// matmul_f32(a, b, c, m, k, n): c = a b (row-major), in float as the GPU does.
void matmul_f32(const hj_dim3 *grid, const hj_dim3 *block, uint32_t, void **p) {
  auto *a = arg<const float *>(p, 0);
  auto *b = arg<const float *>(p, 1);
  auto *c = arg<float *>(p, 2);
  int64_t m = arg<int64_t>(p, 3), k = arg<int64_t>(p, 4), n = arg<int64_t>(p, 5);
  int64_t cells = covered(grid, block, m * n);
  for (int64_t e = 0; e < cells; ++e) {
    int64_t i = e / n, j = e % n;
    float acc = 0.0f;
    for (int64_t t = 0; t < k; ++t) acc += a[i * k + t] * b[t * n + j];
    c[e] = acc;
  }
}

// empty(...): does nothing; for measuring host overhead.
void empty(const hj_dim3 *, const hj_dim3 *, uint32_t, void **) {}

}  // extern "C"
