// reference.h - plain CPU references for the outputs of the example fusions (kernels/fusions.cu).
#pragma once

#include <cstdint>
#include <vector>

namespace hostjit::examples::fusions {

struct ChainOutputs {
  std::vector<float> t, y;
};

struct ScalarsOutputs {
  std::vector<float> y, z;
};

// x row-major [n, h]: y[r] = sum over i < n of x[i * h + r] (h entries), the
// row sums of the permuted view that row_sum_grid reads.
std::vector<float> aliasReduceReference(const std::vector<float> &x, int64_t n, int64_t h);

// c[m, n] = a[m, k] @ b[k, n], all row-major.
std::vector<float> splitkReference(const std::vector<float> &a, const std::vector<float> &b, int64_t m, int64_t k,
                                   int64_t n);

// x row-major [rows, 16]: t = x * alpha + 1, m[j] = mean of column j of t,
// y = t - m[j].
ChainOutputs chainReference(const std::vector<float> &x, int64_t rows, float alpha);

// x has L entries: y[i] = x[i % L] * beta + (i / L) for i < L * k, and
// z[i] = sum over j < k of y[i * k + j] for i < L.
ScalarsOutputs scalarsReference(const std::vector<float> &x, int64_t L, int64_t k, float beta);

}  // namespace hostjit::examples::fusions
