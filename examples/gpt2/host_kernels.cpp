// host_kernels.cpp - host versions of GPT-2's kernels (gpt2.cu), computing
// what the CUDA ones do, in the same order within a row where it matters
// little (f32 sums in index order).
#include <cmath>
#include <cstdint>
#include <limits>

#include "hostjit/runtime.h"
#include "../kernels/host_params.h"

using hostjit_examples::arg;

extern "C" {

void gpt2_embed(const hj_dim3 *, const hj_dim3 *, uint32_t, void **p) {
  auto *tokens = arg<const int64_t *>(p, 0);
  auto *wte = arg<const float *>(p, 1), *wpe = arg<const float *>(p, 2);
  auto *x = arg<float *>(p, 3);
  int64_t n = arg<int64_t>(p, 4), t = arg<int64_t>(p, 5), c = arg<int64_t>(p, 6), vocab = arg<int64_t>(p, 7);
  int64_t context = arg<int64_t>(p, 8);
  for (int64_t r = 0; r < n; ++r)
    for (int64_t j = 0; j < c; ++j) {
      int64_t tok = tokens[r], pos = r % t;
      x[r * c + j] = tok >= 0 && tok < vocab && pos < context ? wte[tok * c + j] + wpe[pos * c + j]
                                                              : std::numeric_limits<float>::quiet_NaN();
    }
}

void gpt2_layernorm(const hj_dim3 *, const hj_dim3 *, uint32_t, void **p) {
  auto *x = arg<const float *>(p, 0), *w = arg<const float *>(p, 1), *b = arg<const float *>(p, 2);
  auto *y = arg<float *>(p, 3);
  int64_t n = arg<int64_t>(p, 4), c = arg<int64_t>(p, 5);
  for (int64_t r = 0; r < n; ++r) {
    const float *row = x + r * c;
    float s = 0.0f, v = 0.0f;
    for (int64_t j = 0; j < c; ++j) s += row[j];
    float mean = s / float(c);
    for (int64_t j = 0; j < c; ++j) v += (row[j] - mean) * (row[j] - mean);
    float rstd = 1.0f / std::sqrt(v / float(c) + 1e-5f);
    for (int64_t j = 0; j < c; ++j) y[r * c + j] = (row[j] - mean) * rstd * w[j] + b[j];
  }
}

void gpt2_split_heads(const hj_dim3 *, const hj_dim3 *, uint32_t, void **p) {
  auto *qkv = arg<const float *>(p, 0);
  auto *q = arg<float *>(p, 1), *k = arg<float *>(p, 2), *v = arg<float *>(p, 3);
  int64_t b = arg<int64_t>(p, 4), t = arg<int64_t>(p, 5), h = arg<int64_t>(p, 6), d = arg<int64_t>(p, 7), c = h * d;
  for (int64_t i = 0; i < b * t * c; ++i) {
    int64_t dd = i % d, hh = (i / d) % h, tt = (i / c) % t, bb = i / (c * t);
    int64_t src = (bb * t + tt) * 3 * c + hh * d + dd, dst = ((bb * h + hh) * t + tt) * d + dd;
    q[dst] = qkv[src];
    k[dst] = qkv[src + c];
    v[dst] = qkv[src + 2 * c];
  }
}

void gpt2_merge_heads(const hj_dim3 *, const hj_dim3 *, uint32_t, void **p) {
  auto *yh = arg<const float *>(p, 0);
  auto *y = arg<float *>(p, 1);
  int64_t b = arg<int64_t>(p, 2), t = arg<int64_t>(p, 3), h = arg<int64_t>(p, 4), d = arg<int64_t>(p, 5), c = h * d;
  for (int64_t i = 0; i < b * t * c; ++i) {
    int64_t dd = i % d, hh = (i / d) % h, tt = (i / c) % t, bb = i / (c * t);
    y[i] = yh[((bb * h + hh) * t + tt) * d + dd];
  }
}

void gpt2_causal_softmax(const hj_dim3 *, const hj_dim3 *, uint32_t, void **p) {
  auto *att = arg<float *>(p, 0);
  int64_t rows = arg<int64_t>(p, 1), t = arg<int64_t>(p, 2);
  for (int64_t r = 0; r < rows; ++r) {
    float *row = att + r * t;
    int64_t last = r % t;
    float m = -std::numeric_limits<float>::infinity(), s = 0.0f;
    for (int64_t j = 0; j <= last; ++j) m = std::fmax(m, row[j]);
    for (int64_t j = 0; j <= last; ++j) s += std::exp(row[j] - m);
    for (int64_t j = 0; j < t; ++j) row[j] = j <= last ? std::exp(row[j] - m) / s : 0.0f;
  }
}

void gpt2_gelu(const hj_dim3 *, const hj_dim3 *, uint32_t, void **p) {
  auto *x = arg<float *>(p, 0);
  for (int64_t i = 0, n = arg<int64_t>(p, 1); i < n; ++i) {
    float v = x[i];
    x[i] = 0.5f * v * (1.0f + std::tanh(0.7978845608028654f * (v + 0.044715f * v * v * v)));
  }
}

}  // extern "C"
