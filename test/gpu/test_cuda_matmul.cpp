// test_cuda_matmul.cpp - the matmul statement on the GPU, through cuBLASLt
// (a bias) and cuBLAS (none): a linear layer with bias and a workspace, a
// batched product with a transpose, f16 and bf16 inputs, operands at odd
// element offsets; evaluator and JIT against references computed here;
// graph mode; eager matmuls replayed from captured graphs; and, each in a
// process of its own, a machine without cuBLASLt or without cuBLAS.
#define CATCH_CONFIG_EXTERNAL_INTERFACES
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>

#include "gpu_helpers.h"
#include "hostjit/exec/host_data.h"

using namespace hostjit;
using namespace hostjit::gputest;

namespace {

std::vector<float> uniform(size_t n, unsigned seed) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float &x : v) x = u(g) + (u(g) > 0 ? 0.01f : -0.01f);  // never 0
  return v;
}

// x [m, k] @ w + b in f64, w stored [k, n], or [n, k] with wTransposed:
// each element's value and the sum of its terms' magnitudes (|b| too), the
// scale an f32 result's rounding is measured against.
struct Reference {
  std::vector<double> want, scale;
};
Reference linearReference(const std::vector<float> &xs, const std::vector<float> &ws, const std::vector<float> &bs,
                          int64_t m, int64_t k, int64_t n, bool wTransposed) {
  Reference r{std::vector<double>(m * n), std::vector<double>(m * n)};
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = bs[j], a = std::fabs(bs[j]);
      for (int64_t q = 0; q < k; ++q) {
        double t = double(xs[i * k + q]) * ws[wTransposed ? j * k + q : q * n + j];
        s += t;
        a += std::fabs(t);
      }
      r.want[i * n + j] = s;
      r.scale[i * n + j] = a;
    }
  return r;
}

// Sets the environment variable `name` to `value`, or unsets it for "".
void setEnv(const char *name, const char *value) {
  if (*value)
    setenv(name, value, 1);
  else
    unsetenv(name);
}

}  // namespace

TEST_CASE("matmul on the GPU: a linear layer of GPT-2's size through cuBLASLt, eager and graph mode",
          "[cuda][matmul]") {
  // y = x @ w^T + b for x [64, 768], w [2304, 768]: the QKV projection.
  Program p = parseText(
      "func @main(%x: f32[?, ?], %w: f32[?, ?], %b: f32[?]) -> (f32[?, ?]) {\n  %rows = size %x, 0\n"
      "  %out = size %w, 0\n  %y = alloc f32[%rows, %out]\n  %ws = alloc u8[4194304]\n"
      "  matmul %x, %w, %y transpose_b bias %b workspace %ws\n  free %ws\n  return %y\n}\n");
  const int64_t m = 64, k = 768, n = 2304;
  std::vector<float> xs = uniform(m * k, 1), ws = uniform(n * k, 2), bs = uniform(n, 3);
  auto [want, scale] = linearReference(xs, ws, bs, m, k, n, true);
  auto rt = cudaRuntime();
  auto x = Tensor::fromHost(rt, {m, k}, xs);
  auto w = Tensor::fromHost(rt, {n, k}, ws);
  auto b = Tensor::fromHost(rt, {n}, bs);
  REQUIRE((x && w && b));
  DLTensor xd = x->dl(), wd = w->dl(), bd = b->dl();
  const DLTensor *inputs[] = {&xd, &wd, &bd};
  eachPath([&](bool useJit, bool graph) {
    Runner r(p, rt, useJit, graph);
    for (int call = 0; call < 2; ++call) {
      auto out = r.run(inputs);
      INFO((out ? "" : out.error().message));
      REQUIRE(out);
      std::vector<float> y = hostFloats((*out)[0]);
      double worst = 0;
      for (size_t i = 0; i < y.size(); ++i) worst = std::max(worst, std::fabs(y[i] - want[i]) / scale[i]);
      // f32 products summed in f32 (TF32 would be off by 1e-3): within
      // 1e-5 of the sum of |terms|, 768 terms of 6e-8 rounding each.
      CHECK(worst < 1e-5);
      if (call == 0) WARN("largest error over the sum of |terms|: " << worst);
    }
  });
  CHECK(rt->stats().library_calls == 8);
}

TEST_CASE("matmul on the GPU: batches with a transposed A, f16 and bf16 inputs, alpha and beta", "[cuda][matmul]") {
  // c[t] = 0.5 * a[t]^T @ b[t], a [3, 40, 24] (stored k x m), b [3, 40, 56]; then the same in f16.
  for (const char *dtype : {"f32", "f16", "bf16"}) {
    INFO(dtype);
    std::string t = dtype;
    Program p = parseText("func @main(%a: " + t + "[?, ?, ?], %b: " + t +
                          "[?, ?, ?]) -> (f32[?, ?, ?]) {\n  %batch = size %a, 0\n  %m = size %a, 2\n  %n = size %b, 2\n"
                          "  %c = alloc f32[%batch, %m, %n]\n  matmul %a, %b, %c transpose_a alpha 0.5\n  return %c\n}\n");
    const int64_t batch = 3, k = 40, m = 24, n = 56;
    // Multiples of 1/8 in [-2, 2]: exact in f16, their sums exact in f32.
    std::mt19937 g(17);
    std::uniform_int_distribution<int> u(1, 16);
    std::vector<float> av(batch * k * m), bv(batch * k * n);
    for (float &v : av) v = u(g) / 8.0f * (u(g) % 2 ? 1 : -1);
    for (float &v : bv) v = u(g) / 8.0f * (u(g) % 2 ? 1 : -1);
    auto rt = cudaRuntime();
    auto make = [&](const std::vector<float> &v, std::vector<int64_t> shape) {
      if (t == "f32") return Tensor::fromHost(rt, shape, v);
      std::vector<uint16_t> h(v.size());
      if (t == "bf16") {  // exact: the high half of the f32
        for (size_t i = 0; i < v.size(); ++i) {
          uint32_t x;
          std::memcpy(&x, &v[i], 4);
          h[i] = uint16_t(x >> 16);
        }
        return Tensor::fromHost(rt, DType::bf16, shape, h.data(), h.size() * 2);
      }
      for (size_t i = 0; i < v.size(); ++i) {  // exact f16 bits of a normal value
        uint32_t x;
        std::memcpy(&x, &v[i], 4);
        h[i] = uint16_t(((x >> 16) & 0x8000) | ((((x >> 23) & 0xff) - 112) << 10) | ((x >> 13) & 0x3ff));
      }
      return Tensor::fromHost(rt, DType::f16, shape, h.data(), h.size() * 2);
    };
    auto a = make(av, {batch, k, m});
    auto b = make(bv, {batch, k, n});
    REQUIRE((a && b));
    DLTensor ad = a->dl(), bd = b->dl();
    const DLTensor *inputs[] = {&ad, &bd};
    for (bool useJit : {false, true}) {
      Runner r(p, rt, useJit);
      auto out = r.run(inputs);
      INFO((out ? "" : out.error().message));
      REQUIRE(out);
      std::vector<float> c = hostFloats((*out)[0]);
      int bad = 0;
      for (int64_t s = 0; s < batch; ++s)
        for (int64_t i = 0; i < m; ++i)
          for (int64_t j = 0; j < n; ++j) {
            double want = 0;
            for (int64_t q = 0; q < k; ++q) want += double(av[(s * k + q) * m + i]) * bv[(s * k + q) * n + j];
            bad += c[(s * m + i) * n + j] != float(0.5 * want);
          }
      CHECK(bad == 0);
    }
  }
}

TEST_CASE("matmul on the GPU: operands at odd element offsets, aligned to 4 bytes only", "[cuda][matmul]") {
  // Slices Inductor takes with reinterpret_tensor can start anywhere: A at
  // element 1, B at 3, C at 5 of their buffers (7 for the product with a
  // bias). cuBLAS (no bias) checks the pointers it is given; cuBLASLt (a
  // bias) is told each operand's alignment, else it assumes 256 bytes. The
  // results are exact (multiples of 1/8, short sums) on every path, graph
  // mode too.
  Program p = parseText(
      "func @main(%x: f32[?], %w: f32[?], %v: f32[80]) -> (f32[?], f32[?]) {\n"
      "  %a = view %x[64, 96] strides[96, 1] offset 1\n"
      "  %b = view %w[96, 80] strides[80, 1] offset 3\n  %y = alloc f32[5125]\n"
      "  %c = view %y[64, 80] strides[80, 1] offset 5\n  matmul %a, %b, %c\n  %z = alloc f32[5127]\n"
      "  %d = view %z[64, 80] strides[80, 1] offset 7\n  matmul %a, %b, %d bias %v\n  return %y, %z\n}\n");
  const int64_t m = 64, k = 96, n = 80;
  std::mt19937 g(23);
  std::uniform_int_distribution<int> u(1, 16);
  std::vector<float> xs(m * k + 1), ws(k * n + 3), vs(n);
  for (float &v : xs) v = u(g) / 8.0f * (u(g) % 2 ? 1 : -1);
  for (float &v : ws) v = u(g) / 8.0f * (u(g) % 2 ? 1 : -1);
  for (float &v : vs) v = u(g) / 8.0f * (u(g) % 2 ? 1 : -1);
  auto rt = cudaRuntime();
  auto x = Tensor::fromHost(rt, {m * k + 1}, xs);
  auto w = Tensor::fromHost(rt, {k * n + 3}, ws);
  auto bias = Tensor::fromHost(rt, {n}, vs);
  REQUIRE((x && w && bias));
  DLTensor xd = x->dl(), wd = w->dl(), vd = bias->dl();
  const DLTensor *inputs[] = {&xd, &wd, &vd};
  eachPath([&](bool useJit, bool graph) {
    Runner r(p, rt, useJit, graph);
    for (int call = 0; call < 2; ++call) {
      auto out = r.run(inputs);
      INFO((out ? "" : out.error().message));
      REQUIRE(out);
      std::vector<float> y = hostFloats((*out)[0]), z = hostFloats((*out)[1]);
      int bad = 0, badBias = 0;
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          double want = 0;
          for (int64_t q = 0; q < k; ++q) want += double(xs[1 + i * k + q]) * ws[3 + q * n + j];
          bad += y[5 + i * n + j] != float(want);
          badBias += z[7 + i * n + j] != float(want + vs[j]);
        }
      CHECK(bad == 0);
      CHECK(badBias == 0);
    }
  });
}

TEST_CASE("matmul on the GPU: the context's workspace, PyTorch's size, none, or a bad setting", "[cuda][matmul]") {
  // A plain product of GPT-2's MLP size (cuBLAS) and one with a bias
  // (cuBLASLt), neither with a workspace of its own: with the context's
  // default workspace and with HOSTJIT_MATMUL_WORKSPACE=0, the same
  // products within f32 rounding; a setting that is no number fails the
  // first matmul, naming the statement.
  Program p = parseText(
      "func @main(%x: f32[64, 768], %w: f32[768, 3072], %b: f32[3072]) -> (f32[64, 3072], f32[64, 3072]) {\n"
      "  %y = alloc f32[64, 3072]\n  %z = alloc f32[64, 3072]\n  matmul %x, %w, %y\n"
      "  matmul %x, %w, %z bias %b\n  return %y, %z\n}\n");
  const int64_t m = 64, k = 768, n = 3072;
  std::vector<float> xs = uniform(m * k, 11), wsv = uniform(k * n, 12), bs = uniform(n, 13);
  auto [want, scale] = linearReference(xs, wsv, bs, m, k, n, false);  // want holds the bias
  for (const char *setting : {"", "0", "lots"}) {
    INFO("HOSTJIT_MATMUL_WORKSPACE=" << setting);
    setEnv("HOSTJIT_MATMUL_WORKSPACE", setting);
    auto rt = cudaRuntime();  // the setting is read by its first matmul
    auto x = Tensor::fromHost(rt, {m, k}, xs);
    auto w = Tensor::fromHost(rt, {k, n}, wsv);
    auto b = Tensor::fromHost(rt, {n}, bs);
    REQUIRE((x && w && b));
    DLTensor xd = x->dl(), wd = w->dl(), bd = b->dl();
    const DLTensor *inputs[] = {&xd, &wd, &bd};
    eachPath([&](bool useJit, bool graph) {
      Runner r(p, rt, useJit, graph);
      auto out = r.run(inputs);
      if (std::string(setting) == "lots") {
        REQUIRE(!out);
        CHECK(out.error().status == HJ_ERR_INVALID_ARGUMENT);
        CHECK(out.error().message.find("matmul of @main at test.hir:4:3: HOSTJIT_MATMUL_WORKSPACE=lots: expected a "
                                       "number of bytes (0: none)") != std::string::npos);
        CHECK(rt->stats().live_bytes == 0);
        return;
      }
      INFO((out ? "" : out.error().message));
      REQUIRE(out);
      std::vector<float> y = hostFloats((*out)[0]), z = hostFloats((*out)[1]);
      double worst = 0;
      for (size_t i = 0; i < y.size(); ++i) {
        worst = std::max(worst, std::fabs(y[i] - (want[i] - bs[i % n])) / scale[i]);
        worst = std::max(worst, std::fabs(z[i] - want[i]) / scale[i]);
      }
      CHECK(worst < 1e-5);
    });
  }
  unsetenv("HOSTJIT_MATMUL_WORKSPACE");
}

TEST_CASE("matmul on the GPU: graph mode over sizes that change every call, eager's bits each call",
          "[cuda][matmul][graph]") {
  // A decode step's attention and projection at lengths 16 to 401: one
  // shape of work, each matmul's child graph captured again for its sizes
  // (or the graph built anew when cuBLAS or cuBLASLt chose other kernels).
  Program p = parseText(
      "func @main(%q: f32[12, ?, 64], %k: f32[12, ?, 64], %x: f32[?, 768], %w: f32[2304, 768], %b: f32[2304])"
      " -> (f32[12, ?, 64], f32[?, 2304]) {\n  %len = size %q, 1\n"
      "  %s = alloc f32[12, %len, %len]\n  matmul %q, %k, %s transpose_b alpha 0.125\n"
      "  %o = alloc f32[12, %len, 64]\n  matmul %s, %k, %o\n  free %s\n"
      "  %y = alloc f32[%len, 2304]\n  %ws = alloc u8[4194304]\n"
      "  matmul %x, %w, %y transpose_b bias %b workspace %ws\n  free %ws\n  return %o, %y\n}\n");
  // Three library calls, each captured anew every call: graph mode every
  // call all the same, which neither rule would give.
  setEnv("HOSTJIT_GRAPH_MIN_LAUNCHES", "0");
  setEnv("HOSTJIT_GRAPH_RECAPTURE_PERCENT", "0");
  auto rt = cudaRuntime();
  setEnv("HOSTJIT_GRAPH_MIN_LAUNCHES", "");
  setEnv("HOSTJIT_GRAPH_RECAPTURE_PERCENT", "");
  auto w = Tensor::fromHost(rt, {2304, 768}, uniform(2304 * 768, 5));
  auto b = Tensor::fromHost(rt, {2304}, uniform(2304, 6));
  REQUIRE((w && b));
  Runner eager(p, rt, true, false), graph(p, rt, true, true);
  int calls = 0;
  for (int64_t len = 16; len <= 401; len += 11, ++calls) {
    INFO("length " << len);
    auto q = Tensor::fromHost(rt, {12, len, 64}, uniform(size_t(12 * len * 64), unsigned(len)));
    auto k = Tensor::fromHost(rt, {12, len, 64}, uniform(size_t(12 * len * 64), unsigned(len + 1)));
    auto x = Tensor::fromHost(rt, {len, 768}, uniform(size_t(len * 768), unsigned(len + 2)));
    REQUIRE((q && k && x));
    DLTensor qd = q->dl(), kd = k->dl(), xd = x->dl(), wd = w->dl(), bd = b->dl();
    const DLTensor *inputs[] = {&qd, &kd, &xd, &wd, &bd};
    auto want = eager.run(inputs);
    auto got = graph.run(inputs);
    INFO((got ? "" : got.error().message));
    REQUIRE(want);
    REQUIRE(got);
    std::string way = hj_graph_outcome(rt->context());
    for (size_t o = 0; o < 2; ++o) {
      std::vector<float> g = hostFloats((*got)[o]), e = hostFloats((*want)[o]);
      REQUIRE(g.size() == e.size());
      double worst = 0, largest = 0;
      for (size_t i = 0; i < g.size(); ++i) {
        worst = std::max(worst, double(std::fabs(g[i] - e[i])));
        largest = std::max(largest, double(std::fabs(e[i])));
      }
      INFO("output " << o << " after \"" << way << "\": largest difference " << worst << " of " << largest);
      CHECK(std::memcmp(g.data(), e.data(), g.size() * sizeof(float)) == 0);
    }
  }
  hj_stats s = rt->stats();
  WARN(calls << " lengths: " << s.graph_builds << " graph builds, " << s.graph_reuses << " reuses, "
             << s.graph_updates << " nodes set");
  CHECK(s.graph_reuses >= uint64_t(calls) / 2);
  CHECK(s.graph_fallbacks == 0);
}

TEST_CASE("matmul on the GPU: eager matmuls replayed from their captured graphs, the same bits", "[cuda][matmul]") {
  // A plain product (cuBLAS) and one with a bias (cuBLASLt), outputs of
  // two sizes so that each call's buffers come back at the same addresses:
  // with HOSTJIT_MATMUL_REPLAYS unset, each matmul's second call captures
  // it and every later call launches the capture; with 0, the library is
  // called every time; the outputs of every call are the same bits.
  // Graph mode captures its matmuls itself: it replays none of these, and
  // does not read the setting.
  Program p = parseText(
      "func @main(%x: f32[64, 768], %w: f32[768, 3072], %v: f32[768, 1024], %b: f32[1024]) -> "
      "(f32[64, 3072], f32[64, 1024]) {\n  %y = alloc f32[64, 3072]\n  %z = alloc f32[64, 1024]\n"
      "  matmul %x, %w, %y\n  matmul %x, %v, %z bias %b\n  return %y, %z\n}\n");
  const int64_t m = 64, k = 768;
  std::vector<float> xs = uniform(m * k, 21), wsv = uniform(k * 3072, 22), vs = uniform(k * 1024, 23),
                     bs = uniform(1024, 24);
  auto [want, scale] = linearReference(xs, vs, bs, m, k, 1024, false);
  constexpr int kCalls = 5;
  std::vector<std::vector<float>> off;  // per path and call: y then z
  for (const char *setting : {"0", "", "lots"}) {
    INFO("HOSTJIT_MATMUL_REPLAYS=" << setting);
    setEnv("HOSTJIT_MATMUL_REPLAYS", setting);
    auto rt = cudaRuntime();  // the setting is read by its first matmul
    auto x = Tensor::fromHost(rt, {m, k}, xs);
    auto w = Tensor::fromHost(rt, {k, 3072}, wsv);
    auto v = Tensor::fromHost(rt, {k, 1024}, vs);
    auto b = Tensor::fromHost(rt, {1024}, bs);
    REQUIRE((x && w && v && b));
    DLTensor xd = x->dl(), wd = w->dl(), vd = v->dl(), bd = b->dl();
    const DLTensor *inputs[] = {&xd, &wd, &vd, &bd};
    size_t path = 0;
    eachPath([&](bool useJit, bool graph) {
      Runner r(p, rt, useJit, graph);
      size_t thisPath = path++;
      uint64_t replaysBefore = rt->stats().library_replays;
      for (int call = 0; call < kCalls; ++call) {
        size_t index = thisPath * kCalls + call;
        auto out = r.run(inputs);
        if (std::string(setting) == "lots" && !graph) {
          REQUIRE(!out);
          CHECK(out.error().status == HJ_ERR_INVALID_ARGUMENT);
          CHECK(out.error().message.find("matmul of @main at test.hir:4:3: HOSTJIT_MATMUL_REPLAYS is \"lots\": "
                                         "expected how many matmul replays a context keeps, from 0 (none) to "
                                         "1000000") != std::string::npos);
          CHECK(rt->stats().live_bytes == 0);
          return;
        }
        INFO((out ? "" : out.error().message));
        REQUIRE(out);
        std::vector<float> y = hostFloats((*out)[0]), z = hostFloats((*out)[1]);
        y.insert(y.end(), z.begin(), z.end());
        if (*setting == '0') {
          double worst = 0;
          for (size_t i = 0; i < z.size(); ++i) worst = std::max(worst, std::fabs(z[i] - want[i]) / scale[i]);
          CHECK(worst < 1e-5);
          off.push_back(std::move(y));
        } else {
          REQUIRE(index < off.size());
          CHECK(std::memcmp(y.data(), off[index].data(), y.size() * sizeof(float)) == 0);
        }
      }
      // Eager: calls 2 to 5 of each matmul; the JIT's first too when the
      // evaluator's buffers came back at the same addresses (the same work).
      uint64_t replays = rt->stats().library_replays - replaysBefore;
      if (*setting == '0' || graph)
        CHECK(replays == 0);
      else if (!useJit)
        CHECK(replays == 2 * (kCalls - 1));
      else
        CHECK((replays >= 2 * (kCalls - 1) && replays <= 2 * kCalls));
    });
  }
  unsetenv("HOSTJIT_MATMUL_REPLAYS");
}

// Hidden, each run alone with HOSTJIT_CUBLASLT or HOSTJIT_CUBLAS naming a
// library that does not exist (a library is loaded once per process): a
// missing library fails the matmul it serves, naming the statement and
// what was tried: cuBLASLt for a bias, cuBLAS for a plain multiply.
static void missingLibrary(const char *env, const char *name, const char *program) {
  const char *lib = std::getenv(env);
  if (!lib || std::string(lib).find("nonexistent") == std::string::npos) {
    WARN(std::string("not run: give ") + env + "=/nonexistent/lib.so and run this test alone");
    return;
  }
  Program p = parseText(program);
  auto rt = cudaRuntime();
  auto a = Tensor::fromHost(rt, {4, 8}, uniform(32, 5));
  auto b = Tensor::fromHost(rt, {8, 2}, uniform(16, 6));
  auto bias = Tensor::fromHost(rt, {2}, uniform(2, 7));
  REQUIRE((a && b && bias));
  DLTensor ad = a->dl(), bd = b->dl(), biasd = bias->dl();
  const DLTensor *inputs[] = {&ad, &bd, &biasd};
  for (bool useJit : {false, true}) {
    Runner r(p, rt, useJit);
    auto out = r.run(inputs);
    REQUIRE(!out);
    CHECK(out.error().status == HJ_ERR_NOT_FOUND);
    CHECK(out.error().message == std::string("matmul of @main at test.hir:3:3: no ") + name + ": none of " + lib +
                                     " could be loaded (install CUDA's cuBLAS, or set " + env +
                                     " to the library's path)");
    CHECK(rt->stats().live_bytes == 0);
  }
}

TEST_CASE("matmul on the GPU: no cuBLASLt for a bias", "[.no_cublaslt]") {
  missingLibrary("HOSTJIT_CUBLASLT", "cuBLASLt",
                 "func @main(%a: f32[4, 8], %b: f32[8, 2], %v: f32[2]) -> (f32[4, 2]) {\n  %c = alloc f32[4, 2]\n"
                 "  matmul %a, %b, %c bias %v\n  return %c\n}\n");
}

TEST_CASE("matmul on the GPU: no cuBLAS for a plain multiply", "[.no_cublas]") {
  missingLibrary("HOSTJIT_CUBLAS", "cuBLAS",
                 "func @main(%a: f32[4, 8], %b: f32[8, 2], %v: f32[2]) -> (f32[4, 2]) {\n  %c = alloc f32[4, 2]\n"
                 "  matmul %a, %b, %c\n  return %c\n}\n");
}
