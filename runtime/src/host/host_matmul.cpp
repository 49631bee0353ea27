// host_matmul.cpp - a matrix multiply on the host, in f32, for every dtype
// hj_matmul takes (f32, f16, bf16 inputs; f32 or the inputs' dtype out).
#include "host/host_matmul.h"

#include <cstring>

#include "hostjit/half.h"

namespace hj {

namespace {

float load(const void *base, int64_t index, uint32_t dtype) {
  if (dtype == HJ_DTYPE_f32) return static_cast<const float *>(base)[index];
  uint16_t h = static_cast<const uint16_t *>(base)[index];
  return dtype == HJ_DTYPE_f16 ? hj_f16_to_f32(h) : hj_bf16_to_f32(h);
}

void store(void *base, int64_t index, uint32_t dtype, float v) {
  if (dtype == HJ_DTYPE_f32) {
    static_cast<float *>(base)[index] = v;
    return;
  }
  static_cast<uint16_t *>(base)[index] = dtype == HJ_DTYPE_f16 ? hj_f32_to_f16(v) : hj_f32_to_bf16(v);
}

}  // namespace

void hostMatmul(const MatmulCall &c) {
  int64_t m = c.m, n = c.n, k = c.k;
  bool ta = c.flags & HJ_MM_TRANSPOSE_A, tb = c.flags & HJ_MM_TRANSPOSE_B;
  // op(A)[i][p] and op(B)[p][j] as offsets in the stored matrices (column
  // strides are 1).
  int64_t aI = ta ? 1 : c.rowStride[0], aP = ta ? c.rowStride[0] : 1;
  int64_t bP = tb ? 1 : c.rowStride[1], bJ = tb ? c.rowStride[1] : 1;
  float alpha = float(c.alpha), beta = float(c.beta);
  for (int64_t bt = 0; bt < c.batch; ++bt) {
    int64_t a0 = bt * c.batchStride[0], b0 = bt * c.batchStride[1], c0 = bt * c.batchStride[2];
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        float sum = 0.0f;
        for (int64_t p = 0; p < k; ++p)
          sum += load(c.a, a0 + i * aI + p * aP, c.aType) * load(c.b, b0 + p * bP + j * bJ, c.aType);
        int64_t at = c0 + i * c.rowStride[2] + j;
        float v = alpha * sum;
        if (beta != 0.0f) v += beta * load(c.c, at, c.cType);
        if (c.flags & HJ_MM_BIAS) v += load(c.bias, j, c.cType);
        store(c.c, at, c.cType, v);
      }
  }
}

}  // namespace hj
