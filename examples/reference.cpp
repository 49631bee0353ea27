// reference.cpp - plain reference computations of the examples.
#include "reference.h"

#include <cmath>
#include <cstring>

namespace hostjit::examples {

const std::vector<std::string> &exampleNames() {
  static const std::vector<std::string> names = {"grid_sum", "splitk", "pipeline", "loop", "streams"};
  return names;
}

std::vector<ExampleCase> exampleCases(const std::string &dir, const std::string &name) {
  std::vector<ExampleCase> cs;
  if (name == "grid_sum") {
    for (auto shape : {std::vector<int64_t>{1, 1}, {100, 37}, {3, 1000}, {1024, 256}})
      cs.push_back({name, dir + "/grid_sum.hir", {{"x", shape}}, {}});
  } else if (name == "splitk") {
    struct S { int64_t m, k, n, splits; };
    for (S s : {S{16, 64, 16, 2}, S{70, 300, 45, 4}, S{1, 7, 3, 3}, S{128, 512, 64, 8}})
      cs.push_back({name, dir + "/splitk.hir", {{"a", {s.m, s.k}}, {"b", {s.k, s.n}}}, {ScalarArg::i64(s.splits)}});
  } else if (name == "pipeline") {
    for (auto shape : {std::vector<int64_t>{1, 1}, {5, 777}, {64, 256}, {33, 1000}})
      cs.push_back({name, dir + "/pipeline.hir", {{"x", shape}}, {ScalarArg::f32(0.75f)}});
  } else if (name == "loop") {
    struct L { int64_t size, n; float w; };
    for (L l : {L{1, 0, 0.5f}, L{257, 1, -0.75f}, L{1000, 5, 0.5f}, L{4096, 12, 0.9f}})
      cs.push_back({name, dir + "/loop.hir", {{"x", {l.size}}}, {ScalarArg::i64(l.n), ScalarArg::f32(l.w)}});
  } else if (name == "streams") {
    for (int64_t size : {int64_t{1}, int64_t{777}, int64_t{4096}})
      cs.push_back({name, dir + "/streams.hir", {{"x", {size}}}, {ScalarArg::f32(2.0f), ScalarArg::f32(-0.5f)}});
  }
  return cs;
}

std::vector<float> gridSumReference(const std::vector<float> &x) {
  double s = 0;
  for (float v : x) s += v;
  return {static_cast<float>(s)};
}

std::vector<float> splitkReference(const std::vector<float> &a, const std::vector<float> &b, int64_t m, int64_t k,
                                   int64_t n) {
  std::vector<float> c(static_cast<size_t>(m * n));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double acc = 0;
      for (int64_t kk = 0; kk < k; ++kk) acc += double(a[i * k + kk]) * double(b[kk * n + j]);
      c[i * n + j] = static_cast<float>(acc);
    }
  return c;
}

std::vector<float> pipelineReference(const std::vector<float> &x, int64_t rows, int64_t cols, float alpha) {
  std::vector<float> y(x.size());
  for (int64_t r = 0; r < rows; ++r) {
    double s = 0;
    for (int64_t j = 0; j < cols; ++j) s += double(x[r * cols + j]) * alpha + 1.0;
    for (int64_t j = 0; j < cols; ++j) y[r * cols + j] = static_cast<float>(double(x[r * cols + j]) * alpha + 1.0 - s / cols);
  }
  return y;
}

std::vector<float> loopReference(const std::vector<float> &x, int64_t n, float w) {
  std::vector<double> y(x.begin(), x.end());
  for (int64_t it = 0; it < n; ++it)
    for (size_t i = 0; i < y.size(); ++i) y[i] = double(w) * y[i] + double(x[i]);
  return {y.begin(), y.end()};
}

std::vector<float> streamsReference(const std::vector<float> &x, float alpha, float beta) {
  std::vector<float> y(x.size());
  for (size_t i = 0; i < x.size(); ++i) y[i] = static_cast<float>(double(alpha) * x[i] + double(beta) * x[i]);
  return y;
}

namespace {
std::vector<float> floats(const std::vector<unsigned char> &bytes) {
  std::vector<float> v(bytes.size() / 4);
  std::memcpy(v.data(), bytes.data(), v.size() * 4);
  return v;
}
}  // namespace

std::string checkExample(const ExampleCase &c, const InputSet &inputs, const std::vector<Tensor> &outputs) {
  if (outputs.size() != 1) return "expected one output, got " + std::to_string(outputs.size());
  auto host = outputs[0].toHost();
  if (!host) return host.error().message;
  std::vector<float> got = floats(*host), want;
  std::vector<double> mag;  // sum of the magnitudes of the terms of each element
  if (c.name == "grid_sum") {
    auto x = floats(inputs.hostData(0));
    want = gridSumReference(x);
    double m = 0;
    for (float v : x) m += std::fabs(v);
    mag = {m};
  } else if (c.name == "splitk") {
    auto sa = c.shapes.at("a"), sb = c.shapes.at("b");
    auto a = floats(inputs.hostData(0)), b = floats(inputs.hostData(1));
    int64_t m = sa[0], k = sa[1], n = sb[1];
    want = splitkReference(a, b, m, k, n);
    mag.assign(want.size(), 0.0);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j)
        for (int64_t kk = 0; kk < k; ++kk) mag[i * n + j] += std::fabs(double(a[i * k + kk]) * b[kk * n + j]);
  } else if (c.name == "pipeline") {
    auto sx = c.shapes.at("x");
    auto x = floats(inputs.hostData(0));
    float alpha = c.scalars[0].value.f32;
    want = pipelineReference(x, sx[0], sx[1], alpha);
    mag.assign(want.size(), 0.0);
    for (int64_t r = 0; r < sx[0]; ++r) {
      double s = 0;
      for (int64_t j = 0; j < sx[1]; ++j) s += std::fabs(double(x[r * sx[1] + j]) * alpha + 1.0);
      for (int64_t j = 0; j < sx[1]; ++j) mag[r * sx[1] + j] = s / sx[1] + std::fabs(double(x[r * sx[1] + j]) * alpha + 1.0);
    }
  } else if (c.name == "loop") {
    auto x = floats(inputs.hostData(0));
    int64_t n = c.scalars[0].value.i64;
    float w = c.scalars[1].value.f32;
    want = loopReference(x, n, w);
    // |x| (1 + |w| + ... + |w|^n): every term of the element.
    double terms = 0, p = 1;
    for (int64_t it = 0; it <= n; ++it, p *= std::fabs(w)) terms += p;
    mag.resize(x.size());
    for (size_t i = 0; i < x.size(); ++i) mag[i] = std::fabs(x[i]) * terms * (n + 1);
  } else if (c.name == "streams") {
    auto x = floats(inputs.hostData(0));
    float alpha = c.scalars[0].value.f32, beta = c.scalars[1].value.f32;
    want = streamsReference(x, alpha, beta);
    mag.resize(x.size());
    for (size_t i = 0; i < x.size(); ++i) mag[i] = std::fabs(x[i]) * (std::fabs(alpha) + std::fabs(beta));
  } else {
    return "unknown example " + c.name;
  }
  if (got.size() != want.size())
    return "output has " + std::to_string(got.size()) + " elements, the reference " + std::to_string(want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    double err = std::fabs(double(got[i]) - double(want[i]));
    if (!(err <= 1e-5 * mag[i] + 1e-6))
      return "element " + std::to_string(i) + " is " + std::to_string(got[i]) + ", the reference " +
             std::to_string(want[i]) + " (tolerance " + std::to_string(1e-5 * mag[i] + 1e-6) + ")";
  }
  return "";
}

}  // namespace hostjit::examples
