// test_gpt2.cpp - GPT-2's forward pass, the tiny configuration
// (examples/gpt2/gpt2_tiny.hir: 2 layers, 4 heads, width 64, vocabulary
// 97), on the host backend against a reference computed here in double;
// evaluator, JIT and graph mode; the generated programs up to date.
#include <cmath>
#include <cstdlib>
#include <random>

#include "helpers.h"

using namespace hostjit;
using namespace hostjit::test;

namespace {

constexpr int64_t kLayers = 2, kHeads = 4, kWidth = 64, kVocab = 97, kContext = 16;

struct Weights {
  std::vector<std::vector<float>> all;  // in the program's parameter order after the tokens
  std::vector<std::vector<int64_t>> shapes;
};

// Random weights from a fixed seed, never zero: layer-norm gains near 1,
// everything else small.
Weights makeWeights(const Program &p) {
  std::mt19937 g(2026);
  std::uniform_real_distribution<float> u(0.02f, 0.2f);
  Weights w;
  for (size_t i = 1; i < p.params.size(); ++i) {
    const Value &v = p.value(p.params[i]);
    std::vector<int64_t> shape(v.inputDims.begin(), v.inputDims.begin() + v.rank);
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    bool gain = v.name.find("ln") != std::string::npos && v.name.back() == 'w';
    std::vector<float> x(n);
    for (float &f : x) f = (gain ? 1.0f : 0.0f) + u(g) * (g() % 2 ? 1.0f : -1.0f);
    w.all.push_back(std::move(x));
    w.shapes.push_back(shape);
  }
  return w;
}

// y = x W^T + b (x rows x in, W out x in).
std::vector<double> linear(const std::vector<double> &x, int64_t rows, const std::vector<float> &wt,
                           const std::vector<float> &b, int64_t in, int64_t out) {
  std::vector<double> y(rows * out);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t o = 0; o < out; ++o) {
      double s = b.empty() ? 0.0 : b[o];
      for (int64_t i = 0; i < in; ++i) s += x[r * in + i] * wt[o * in + i];
      y[r * out + o] = s;
    }
  return y;
}

std::vector<double> layerNorm(const std::vector<double> &x, int64_t rows, const std::vector<float> &w,
                              const std::vector<float> &b) {
  std::vector<double> y(x.size());
  for (int64_t r = 0; r < rows; ++r) {
    double mean = 0, var = 0;
    for (int64_t j = 0; j < kWidth; ++j) mean += x[r * kWidth + j];
    mean /= kWidth;
    for (int64_t j = 0; j < kWidth; ++j) var += (x[r * kWidth + j] - mean) * (x[r * kWidth + j] - mean);
    double rstd = 1.0 / std::sqrt(var / kWidth + 1e-5);
    for (int64_t j = 0; j < kWidth; ++j) y[r * kWidth + j] = (x[r * kWidth + j] - mean) * rstd * w[j] + b[j];
  }
  return y;
}

// GPT-2's forward in double: the logits [b * t, vocab].
std::vector<double> reference(const std::vector<int64_t> &tokens, int64_t b, int64_t t, const Weights &w) {
  const int64_t c = kWidth, d = kWidth / kHeads, n = b * t;
  auto W = [&](size_t i) -> const std::vector<float> & { return w.all[i]; };
  std::vector<double> x(n * c);
  for (int64_t r = 0; r < n; ++r)
    for (int64_t j = 0; j < c; ++j) x[r * c + j] = double(W(0)[tokens[r] * c + j]) + W(1)[(r % t) * c + j];
  for (int64_t l = 0; l < kLayers; ++l) {
    size_t base = 2 + 12 * l;
    auto h = layerNorm(x, n, W(base + 0), W(base + 1));
    auto qkv = linear(h, n, W(base + 2), W(base + 3), c, 3 * c);
    std::vector<double> y(n * c);
    for (int64_t bb = 0; bb < b; ++bb)
      for (int64_t hh = 0; hh < kHeads; ++hh)
        for (int64_t i = 0; i < t; ++i) {
          std::vector<double> att(i + 1);
          double m = -1e300, s = 0;
          for (int64_t j = 0; j <= i; ++j) {
            double dot = 0;
            for (int64_t e = 0; e < d; ++e)
              dot += qkv[(bb * t + i) * 3 * c + hh * d + e] * qkv[(bb * t + j) * 3 * c + c + hh * d + e];
            att[j] = dot / std::sqrt(double(d));
            m = std::max(m, att[j]);
          }
          for (double &a : att) s += (a = std::exp(a - m));
          for (int64_t e = 0; e < d; ++e) {
            double acc = 0;
            for (int64_t j = 0; j <= i; ++j) acc += att[j] / s * qkv[(bb * t + j) * 3 * c + 2 * c + hh * d + e];
            y[(bb * t + i) * c + hh * d + e] = acc;
          }
        }
    auto a = linear(y, n, W(base + 4), W(base + 5), c, c);
    for (size_t i = 0; i < x.size(); ++i) x[i] += a[i];
    auto h2 = layerNorm(x, n, W(base + 6), W(base + 7));
    auto f = linear(h2, n, W(base + 8), W(base + 9), c, 4 * c);
    for (double &v : f) v = 0.5 * v * (1.0 + std::tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)));
    auto m2 = linear(f, n, W(base + 10), W(base + 11), 4 * c, c);
    for (size_t i = 0; i < x.size(); ++i) x[i] += m2[i];
  }
  size_t last = 2 + 12 * kLayers;
  auto hf = layerNorm(x, n, W(last), W(last + 1));
  return linear(hf, n, W(0), {}, c, kVocab);
}

}  // namespace

TEST_CASE("gpt2: the generated programs are what generate.py writes", "[gpt2]") {
  std::string cmd = "python3 " + std::string(HOSTJIT_SOURCE_DIR) + "/examples/gpt2/generate.py --check";
  CHECK(std::system(cmd.c_str()) == 0);
}

TEST_CASE("gpt2: the tiny model's logits match a reference, evaluator, JIT and graph mode", "[gpt2]") {
  std::string file = std::string(HOSTJIT_SOURCE_DIR) + "/examples/gpt2/gpt2_tiny.hir";
  Program p = parseOk(readFile(file), file);
  REQUIRE(p.params.size() == 3 + 12 * kLayers + 2);
  Weights w = makeWeights(p);
  const int64_t b = 2, t = 9;  // t below the context of 16
  std::mt19937 g(7);
  std::vector<int64_t> tokens(b * t);
  for (int64_t &x : tokens) x = int64_t(g() % kVocab);
  std::vector<double> want = reference(tokens, b, t, w);
  auto rt = makeRuntime();
  auto tok = Tensor::fromHost(rt, {b, t}, tokens);
  REQUIRE(tok);
  std::vector<Tensor> held;
  for (size_t i = 0; i < w.all.size(); ++i) {
    auto x = Tensor::fromHost(rt, w.shapes[i], w.all[i]);
    REQUIRE(x);
    held.push_back(std::move(*x));
  }
  std::vector<DLTensor> dl{tok->dl()};
  for (Tensor &x : held) dl.push_back(x.dl());
  std::vector<const DLTensor *> inputs;
  for (const DLTensor &x : dl) inputs.push_back(&x);
  std::vector<float> first;
  for (bool jit : {false, true})
    for (bool graph : {false, true}) {
      INFO((jit ? "jit" : "eval") << (graph ? ", graph" : ""));
      Runner r(p, rt, jit, OptLevel::O2, graph);
      for (int call = 0; call < 2; ++call) {
        auto out = r.run(inputs);
        INFO((out ? "" : out.error().message));
        REQUIRE(out);
        std::vector<float> logits = floats((*out)[0]);
        REQUIRE(logits.size() == want.size());
        double worst = 0;
        for (size_t i = 0; i < want.size(); ++i) worst = std::max(worst, std::fabs(logits[i] - want[i]));
        INFO("largest absolute error " << worst);
        CHECK(worst < 1e-4);  // f32 against double, logits of order 1
        if (first.empty()) {
          first = logits;
          WARN("tiny GPT-2: largest absolute error of the logits against the double reference: " << worst);
        }
        CHECK(logits == first);  // every path, and graph mode, computes the same
      }
    }
  CHECK(rt->stats().live_bytes == 0);
}
