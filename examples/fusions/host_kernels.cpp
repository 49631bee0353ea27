// host_kernels.cpp - host versions of the kernels in kernels/fusions.cu, run block by block as a GPU runs them.
//
// Built as a host-kernel library (hj_load_host_library / --host-kernels): one
// extern "C" function per kernel, same name, same parameters, same contract
// checks (see fusions.cu for each contract). Each loops over the blocks in
// grid order (x fastest) and uses the work buffers and semaphores as the CUDA
// block does; atomicAdd becomes a plain increment. Results equal the CUDA
// kernels' bit for bit, except that a CUDA block reduces its 256 elements as
// a tree where the host sums them in order (row_sum_grid).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>

#include "hostjit/runtime.h"
#include "../kernels/host_params.h"
#include "kernels/tensor.h"

namespace {

using hostjit_examples::arg;

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// grid == (gx, gy, 1) and block == (bx, 1, 1).
bool launchIs(const hj_dim3 *grid, const hj_dim3 *block, int64_t gx, int64_t gy, int64_t bx) {
  return int64_t(grid->x) == gx && int64_t(grid->y) == gy && grid->z == 1 && int64_t(block->x) == bx &&
         block->y == 1 && block->z == 1;
}

void fillNaN(float *p, int64_t n) {
  for (int64_t i = 0; i < n; ++i) p[i] = kNaN;
}

// Whether p[0..pn) and q[0..qn) share memory.
bool overlap(const float *p, int64_t pn, const float *q, int64_t qn) {
  auto pa = reinterpret_cast<uintptr_t>(p), qa = reinterpret_cast<uintptr_t>(q);
  return pn > 0 && qn > 0 && pa < qa + uintptr_t(qn) * sizeof(float) && qa < pa + uintptr_t(pn) * sizeof(float);
}

}  // namespace

extern "C" {

// row_sum_grid(tensor<f32, 2> xt, ptr<f32> y, ptr<f32> work, ptr<i32> sem, i64 per_row)
void row_sum_grid(const hj_dim3 *grid, const hj_dim3 *block, uint32_t, void **p) {
  auto xt = arg<Tensor<float, 2>>(p, 0);
  auto *y = arg<float *>(p, 1);
  auto *work = arg<float *>(p, 2);
  auto *sem = arg<int32_t *>(p, 3);
  auto per_row = arg<int64_t>(p, 4);
  const int64_t R = xt.sizes[0], C = xt.sizes[1];
  if (per_row != (C + 255) / 256 || !launchIs(grid, block, per_row, R, 256)) return fillNaN(y, R);
  for (int64_t r = 0; r < R; ++r)
    for (int64_t bx = 0; bx < per_row; ++bx) {
      float partial = 0.0f;
      for (int64_t c = bx * 256; c < std::min(bx * 256 + 256, C); ++c)
        partial += xt.data[r * xt.strides[0] + c * xt.strides[1]];
      work[r * per_row + bx] = partial;
      const int32_t ticket = sem[r]++;
      if (ticket < 0 || ticket >= per_row) {
        y[r] = kNaN;
        continue;
      }
      if (ticket != per_row - 1) continue;
      float sum = 0.0f;
      for (int64_t b = 0; b < per_row; ++b) sum += work[r * per_row + b];
      y[r] = sum;
      if (sem[r] != per_row) y[r] = kNaN;
    }
}

// splitk_gemm(tensor<f32, 2> a, tensor<f32, 2> b, tensor<f32, 2> c, ptr<i32> sem, i64 splits)
void splitk_gemm(const hj_dim3 *grid, const hj_dim3 *block, uint32_t, void **p) {
  auto a = arg<Tensor<float, 2>>(p, 0);
  auto b = arg<Tensor<float, 2>>(p, 1);
  auto c = arg<Tensor<float, 2>>(p, 2);
  auto *sem = arg<int32_t *>(p, 3);
  auto splits = arg<int64_t>(p, 4);
  const int64_t M = a.sizes[0], K = a.sizes[1], N = b.sizes[1], tiles = (M * N + 255) / 256;
  auto at = [&c](int64_t o) -> float & { return c.data[o / c.sizes[1] * c.strides[0] + o % c.sizes[1] * c.strides[1]]; };
  if (splits < 1 || b.sizes[0] != K || c.sizes[0] != M || c.sizes[1] != N || !launchIs(grid, block, tiles, splits, 256)) {
    for (int64_t o = 0; o < c.sizes[0] * c.sizes[1]; ++o) at(o) = kNaN;
    return;
  }
  const int64_t chunk = (K + splits - 1) / splits;
  for (int64_t s = 0; s < splits; ++s)
    for (int64_t t = 0; t < tiles; ++t) {
      const int64_t lo = t * 256, hi = std::min(lo + 256, M * N);
      if (sem[t] != s) {  // never in [0, s) here, where a GPU block would wait: every earlier slice has run
        sem[t] = -1;
        for (int64_t o = lo; o < hi; ++o) at(o) = kNaN;
        continue;
      }
      for (int64_t o = lo; o < hi; ++o) {
        const int64_t i = o / N, j = o % N;
        float acc = 0.0f;
        for (int64_t kk = s * chunk; kk < std::min(s * chunk + chunk, K); ++kk)
          acc += a.data[i * a.strides[0] + kk * a.strides[1]] * b.data[kk * b.strides[0] + j * b.strides[1]];
        at(o) = s == 0 ? acc : at(o) + acc;
      }
      sem[t] = s + 1 == splits ? 0 : int32_t(s + 1);
    }
}

// scale_shift2d(tensor<f32, 2> x, ptr<f32> t, f32 alpha)
void scale_shift2d(const hj_dim3 *grid, const hj_dim3 *block, uint32_t, void **p) {
  auto x = arg<Tensor<float, 2>>(p, 0);
  auto *t = arg<float *>(p, 1);
  auto alpha = arg<float>(p, 2);
  const int64_t n = x.sizes[0] * 16;
  if (x.sizes[1] != 16 || !launchIs(grid, block, (n + 255) / 256, 1, 256)) return fillNaN(t, n);
  for (int64_t i = 0; i < n; ++i) t[i] = x.data[i / 16 * x.strides[0] + i % 16 * x.strides[1]] * alpha + 1.0f;
}

// col_mean(ptr<f32> t, ptr<f32> m, ptr<f32> work, ptr<i32> sem, i64 rows)
void col_mean(const hj_dim3 *grid, const hj_dim3 *block, uint32_t, void **p) {
  auto *t = arg<const float *>(p, 0);
  auto *m = arg<float *>(p, 1);
  auto *work = arg<float *>(p, 2);
  auto *sem = arg<int32_t *>(p, 3);
  auto rows = arg<int64_t>(p, 4);
  const int64_t blocks = (rows + 15) / 16;
  if (!launchIs(grid, block, blocks, 1, 256)) return fillNaN(m, 16);
  for (int64_t b = 0; b < blocks; ++b) {
    for (int64_t j = 0; j < 16; ++j) {
      float acc = 0.0f;
      for (int64_t r = b * 16; r < std::min(b * 16 + 16, rows); ++r) acc += t[r * 16 + j];
      work[b * 16 + j] = acc;
    }
    const int32_t ticket = (*sem)++;
    if (ticket < 0 || ticket >= blocks) {
      fillNaN(m, 16);
      continue;
    }
    if (ticket != blocks - 1) continue;
    for (int64_t j = 0; j < 16; ++j) {
      float acc = 0.0f;
      for (int64_t q = 0; q < blocks; ++q) acc += work[q * 16 + j];
      m[j] = acc / float(rows);
    }
    if (*sem != blocks) fillNaN(m, 16);
  }
}

// center_bcast(tensor<f32, 2> t, ptr<f32> m, ptr<f32> y, tensor<f32, 3> bc)
void center_bcast(const hj_dim3 *grid, const hj_dim3 *block, uint32_t, void **p) {
  auto t = arg<Tensor<float, 2>>(p, 0);
  auto *m = arg<const float *>(p, 1);
  auto *y = arg<float *>(p, 2);
  auto bc = arg<Tensor<float, 3>>(p, 3);
  const int64_t n = t.sizes[0] * 16, blocks = (n + 255) / 256;
  if (t.sizes[1] != 16 || !launchIs(grid, block, blocks, 1, 256)) return fillNaN(y, n);
  const bool bcOk = bc.sizes[0] == 64 && bc.sizes[1] == 32 && bc.sizes[2] == 16 && bc.strides[0] == 0 &&
                    bc.strides[1] == 0 && bc.strides[2] == 1;
  for (int64_t blk = 0; blk < blocks; ++blk) {
    const int64_t lo = blk * 256, hi = std::min(lo + 256, n);
    if (!bcOk) {
      fillNaN(y + lo, hi - lo);
      continue;
    }
    for (int64_t j = 0; j < 16; ++j) bc.data[j * bc.strides[2]] = m[j];
    for (int64_t i = lo; i < hi; ++i) {
      const int64_t r = i / 16, j = i % 16;
      y[i] = t.data[r * t.strides[0] + j * t.strides[1]] -
             bc.data[r % 64 * bc.strides[0] + r % 32 * bc.strides[1] + j * bc.strides[2]];
    }
  }
}

// tile_axpy(tensor<f32, 1> x, ptr<f32> y, i64 n, f32 beta)
void tile_axpy(const hj_dim3 *grid, const hj_dim3 *block, uint32_t, void **p) {
  auto x = arg<Tensor<float, 1>>(p, 0);
  auto *y = arg<float *>(p, 1);
  auto n = arg<int64_t>(p, 2);
  auto beta = arg<float>(p, 3);
  const int64_t L = x.sizes[0];
  if (L < 1 || n % L != 0 || !launchIs(grid, block, (n + 127) / 128, 1, 128)) return fillNaN(y, n);
  for (int64_t i = 0; i < n; ++i) y[i] = x.data[i % L * x.strides[0]] * beta + float(i / L);
}

// window_sum(ptr<f32> y, ptr<f32> z, ptr<f32> scratch, i64 count, i64 k)
void window_sum(const hj_dim3 *grid, const hj_dim3 *block, uint32_t, void **p) {
  auto *y = arg<const float *>(p, 0);
  auto *z = arg<float *>(p, 1);
  auto *scratch = arg<float *>(p, 2);
  auto count = arg<int64_t>(p, 3), k = arg<int64_t>(p, 4);
  const int64_t n = count * k;
  if (k < 0 || overlap(scratch, n, y, n) || overlap(scratch, n, z, count) || !launchIs(grid, block, (count + 127) / 128, 1, 128)) return fillNaN(z, count);
  for (int64_t i = 0; i < count; ++i) {
    for (int64_t j = 0; j < k; ++j) scratch[i * k + j] = y[i * k + j];
    float acc = 0.0f;
    for (int64_t j = 0; j < k; ++j) acc += scratch[i * k + j];
    z[i] = acc;
  }
}

}  // extern "C"
