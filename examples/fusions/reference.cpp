// reference.cpp - plain CPU references for the outputs of the example fusions.
//
// Float arithmetic, as the kernels use. The chain and scalars references add
// in the kernels' order, so they agree with the kernels bit for bit; the
// others add in plain index order.
#include "reference.h"

#include <algorithm>

namespace hostjit::examples::fusions {

std::vector<float> aliasReduceReference(const std::vector<float> &x, int64_t n, int64_t h) {
  std::vector<float> y(static_cast<size_t>(h), 0.0f);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t r = 0; r < h; ++r) y[r] += x[i * h + r];
  return y;
}

std::vector<float> splitkReference(const std::vector<float> &a, const std::vector<float> &b, int64_t m, int64_t k,
                                   int64_t n) {
  std::vector<float> c(static_cast<size_t>(m * n));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      float acc = 0.0f;
      for (int64_t kk = 0; kk < k; ++kk) acc += a[i * k + kk] * b[kk * n + j];
      c[i * n + j] = acc;
    }
  return c;
}

ChainOutputs chainReference(const std::vector<float> &x, int64_t rows, float alpha) {
  ChainOutputs out;
  out.t.resize(static_cast<size_t>(rows * 16));
  out.y.resize(out.t.size());
  for (size_t i = 0; i < out.t.size(); ++i) out.t[i] = x[i] * alpha + 1.0f;
  // Column sums per group of 16 rows, then over the groups (col_mean's order).
  float m[16];
  for (int64_t j = 0; j < 16; ++j) {
    float sum = 0.0f;
    for (int64_t g = 0; g < rows; g += 16) {
      float part = 0.0f;
      for (int64_t r = g; r < std::min(g + 16, rows); ++r) part += out.t[r * 16 + j];
      sum += part;
    }
    m[j] = sum / static_cast<float>(rows);
  }
  for (size_t i = 0; i < out.y.size(); ++i) out.y[i] = out.t[i] - m[i % 16];
  return out;
}

ScalarsOutputs scalarsReference(const std::vector<float> &x, int64_t L, int64_t k, float beta) {
  ScalarsOutputs out;
  out.y.resize(static_cast<size_t>(L * k));
  out.z.assign(static_cast<size_t>(L), 0.0f);
  for (int64_t i = 0; i < L * k; ++i) out.y[i] = x[i % L] * beta + static_cast<float>(i / L);
  for (int64_t i = 0; i < L; ++i)
    for (int64_t j = 0; j < k; ++j) out.z[i] += out.y[i * k + j];
  return out;
}

}  // namespace hostjit::examples::fusions
