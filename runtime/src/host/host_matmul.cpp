// host_matmul.cpp - a matrix multiply on the host, in f32, for every dtype
// hj_matmul takes (f32, f16, bf16 inputs; f32 or the inputs' dtype out).
#include "host/host_matmul.h"

#include <cstring>

namespace hj {

namespace {

float fromHalf(uint16_t h) {
  uint32_t sign = uint32_t(h >> 15) << 31, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
  uint32_t bits;
  if (exp == 0) {
    if (man == 0) {
      bits = sign;
    } else {  // subnormal: normalise
      int e = -1;
      do {
        ++e;
        man <<= 1;
      } while (!(man & 0x400));
      bits = sign | uint32_t(127 - 15 - e) << 23 | (man & 0x3ff) << 13;
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | man << 13;
  } else {
    bits = sign | (exp + 127 - 15) << 23 | man << 13;
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t toHalf(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000;
  int32_t exp = int32_t((x >> 23) & 0xff) - 127 + 15;
  uint32_t man = x & 0x7fffff;
  if (((x >> 23) & 0xff) == 0xff) return uint16_t(sign | 0x7c00 | (man ? 0x200 : 0));
  if (exp >= 31) return uint16_t(sign | 0x7c00);
  if (exp <= 0) {
    if (exp < -10) return uint16_t(sign);
    man |= 0x800000;
    uint32_t shift = uint32_t(14 - exp);
    uint32_t h = man >> shift, rest = man & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rest > half || (rest == half && (h & 1))) ++h;
    return uint16_t(sign | h);
  }
  uint32_t h = uint32_t(exp) << 10 | man >> 13, rest = man & 0x1fff;
  if (rest > 0x1000 || (rest == 0x1000 && (h & 1))) ++h;  // may carry into the exponent: still right
  return uint16_t(sign | h);
}

float fromBf16(uint16_t h) {
  uint32_t bits = uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t toBf16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffff) > 0x7f800000) return uint16_t((x >> 16) | 0x40);  // NaN stays NaN
  x += 0x7fff + ((x >> 16) & 1);
  return uint16_t(x >> 16);
}

float load(const void *base, int64_t index, uint32_t dtype) {
  if (dtype == HJ_DTYPE_f32) return static_cast<const float *>(base)[index];
  uint16_t h = static_cast<const uint16_t *>(base)[index];
  return dtype == HJ_DTYPE_f16 ? fromHalf(h) : fromBf16(h);
}

void store(void *base, int64_t index, uint32_t dtype, float v) {
  if (dtype == HJ_DTYPE_f32) {
    static_cast<float *>(base)[index] = v;
    return;
  }
  static_cast<uint16_t *>(base)[index] = dtype == HJ_DTYPE_f16 ? toHalf(v) : toBf16(v);
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
