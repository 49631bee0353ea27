// test_matmul.cpp - the matmul statement on the host backend: every layout
// (transposes, batches, a matrix shared across the batch), f32, f16 and
// bf16 inputs, bias, alpha and beta, against a reference computed here;
// evaluator and JIT with identical records; shapes that disagree at run
// time; graph mode holding it as a node; injected failures.
#include <cmath>
#include <optional>
#include <random>

#include "common/inject.h"
#include "helpers.h"

using namespace hostjit;
using namespace hostjit::test;

namespace {

struct Config {
  bool ta = false, tb = false;
  uint32_t rankA = 2, rankB = 2;
  std::string in = "f32", out = "f32";
  bool bias = false;
  double alpha = 1.0, beta = 0.0;
  int64_t batch = 1, m = 5, n = 4, k = 7;
};

std::string dims(uint32_t rank) { return rank == 3 ? "[?, ?, ?]" : "[?, ?]"; }

// The program of a configuration: C from a copy of %d when beta is not 0.
std::string program(const Config &c) {
  bool batched = c.rankA == 3 || c.rankB == 3;
  std::string s = "kernel @copy(ptr<f32>, ptr<f32>, i64) {\n  host = \"copy_f32\"\n}\n\n";
  s += "func @main(%a: " + c.in + dims(c.rankA) + ", %b: " + c.in + dims(c.rankB) + ", %bias: " + c.out +
       "[?], %d: " + c.out + (batched ? "[?, ?, ?]" : "[?, ?]") + ") -> (" + c.out + (batched ? "[?, ?, ?]" : "[?, ?]") +
       ") {\n";
  uint32_t ra = c.rankA, rb = c.rankB;
  s += "  %m = size %a, " + std::to_string(c.ta ? ra - 1 : ra - 2) + "\n";
  s += "  %n = size %b, " + std::to_string(c.tb ? rb - 2 : rb - 1) + "\n";
  if (batched) s += std::string("  %batch = size ") + (ra == 3 ? "%a" : "%b") + ", 0\n";
  s += "  %c = alloc " + c.out + (batched ? "[%batch, %m, %n]" : "[%m, %n]") + "\n";
  if (c.beta != 0.0) {
    s += "  %mn = mul %m, %n\n";
    s += batched ? "  %all = mul %mn, %batch\n" : "  %all = mul %mn, 1\n";
    s += "  launch @copy grid(1, 1, 1) block(1, 1, 1) smem(0) (%d, %c, %all)\n";
  }
  s += "  matmul %a, %b, %c";
  if (c.ta) s += " transpose_a";
  if (c.tb) s += " transpose_b";
  if (c.alpha != 1.0) s += " alpha " + std::to_string(c.alpha);
  if (c.beta != 0.0) s += " beta " + std::to_string(c.beta);
  if (c.bias) s += " bias %bias";
  s += "\n  return %c\n}\n";
  return s;
}

// Random non-zero multiples of 1/8 in [-2, 2]: exact in f16 and bf16, and
// their products and sums exact in f32, so every backend must agree with
// the reference to the last bit before the output's own rounding.
std::vector<float> dyadic(size_t n, std::mt19937 &g) {
  std::uniform_int_distribution<int> u(1, 16);
  std::vector<float> v(n);
  for (float &x : v) x = static_cast<float>(u(g)) / 8.0f * (u(g) % 2 ? 1.0f : -1.0f);
  return v;
}

// Bits of a float that f16 or bf16 hold exactly (no rounding needed).
uint16_t exactBits(float f, const std::string &dtype) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if (dtype == "bf16") return uint16_t(x >> 16);
  if (f == 0.0f) return uint16_t((x >> 16) & 0x8000);
  uint32_t sign = (x >> 16) & 0x8000, exp = ((x >> 23) & 0xff) - 127 + 15, man = (x >> 13) & 0x3ff;
  return uint16_t(sign | exp << 10 | man);
}

Tensor tensorOf(const std::shared_ptr<Runtime> &rt, const std::string &dtype, std::vector<int64_t> shape,
                const std::vector<float> &v) {
  if (dtype == "f32") {
    auto t = Tensor::fromHost(rt, shape, v);
    REQUIRE(t);
    return std::move(*t);
  }
  std::vector<uint16_t> bits(v.size());
  for (size_t i = 0; i < v.size(); ++i) bits[i] = exactBits(v[i], dtype);
  auto t = Tensor::fromHost(rt, dtype == "f16" ? DType::f16 : DType::bf16, shape, bits.data(), bits.size() * 2);
  REQUIRE(t);
  return std::move(*t);
}

float decode(const Tensor &t, size_t i) {
  auto host = t.toHost();
  REQUIRE(host);
  const unsigned char *p = host->data();
  if (t.dtype() == DType::f32) {
    float f;
    std::memcpy(&f, p + 4 * i, 4);
    return f;
  }
  uint16_t h;
  std::memcpy(&h, p + 2 * i, 2);
  uint32_t bits;
  if (t.dtype() == DType::bf16) {
    bits = uint32_t(h) << 16;
  } else {
    uint32_t exp = (h >> 10) & 0x1f, man = h & 0x3ff;
    bits = uint32_t(h >> 15) << 31 | (exp ? (exp + 127 - 15) << 23 | man << 13 : 0);  // normal or zero
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

// Runs configuration c through the evaluator and the JIT; checks both
// against the reference (exact for f32, to the output's rounding for f16
// and bf16) and against each other's record.
void check(const Config &c) {
  std::string text = program(c);
  INFO(text);
  Program p = parseOk(text);
  std::mt19937 g(42);
  int64_t aRows = c.ta ? c.k : c.m, aCols = c.ta ? c.m : c.k, bRows = c.tb ? c.n : c.k, bCols = c.tb ? c.k : c.n;
  int64_t aBatch = c.rankA == 3 ? c.batch : 1, bBatch = c.rankB == 3 ? c.batch : 1;
  int64_t batch = std::max(aBatch, bBatch);
  std::vector<float> av = dyadic(aBatch * aRows * aCols, g), bv = dyadic(bBatch * bRows * bCols, g);
  std::vector<float> biasv = dyadic(c.n, g), dv = dyadic(batch * c.m * c.n, g);
  std::vector<double> want(batch * c.m * c.n);
  for (int64_t t = 0; t < batch; ++t)
    for (int64_t i = 0; i < c.m; ++i)
      for (int64_t j = 0; j < c.n; ++j) {
        double s = 0;
        for (int64_t q = 0; q < c.k; ++q) {
          double x = av[(aBatch > 1 ? t : 0) * aRows * aCols + (c.ta ? q * aCols + i : i * aCols + q)];
          double y = bv[(bBatch > 1 ? t : 0) * bRows * bCols + (c.tb ? j * bCols + q : q * bCols + j)];
          s += x * y;
        }
        size_t at = (t * c.m + i) * c.n + j;
        want[at] = c.alpha * s + (c.beta != 0.0 ? c.beta * dv[at] : 0.0) + (c.bias ? biasv[j] : 0.0);
      }
  // One runtime and one set of inputs for both paths, so the records name
  // the same input addresses.
  auto rt = makeRuntime();
  auto shape = [](int64_t b, int64_t r, int64_t cl, uint32_t rank) {
    return rank == 3 ? std::vector<int64_t>{b, r, cl} : std::vector<int64_t>{r, cl};
  };
  Tensor a = tensorOf(rt, c.in, shape(aBatch, aRows, aCols, c.rankA), av);
  Tensor b = tensorOf(rt, c.in, shape(bBatch, bRows, bCols, c.rankB), bv);
  Tensor bias = tensorOf(rt, c.out, {c.n}, biasv);
  bool batched = c.rankA == 3 || c.rankB == 3;
  Tensor d = tensorOf(rt, c.out, batched ? std::vector<int64_t>{batch, c.m, c.n} : std::vector<int64_t>{c.m, c.n}, dv);
  DLTensor ad = a.dl(), bd = b.dl(), biasd = bias.dl(), dd = d.dl();
  const DLTensor *inputs[] = {&ad, &bd, &biasd, &dd};
  std::vector<std::string> first;
  for (bool jit : {false, true}) {
    INFO((jit ? "jit" : "eval"));
    hj_reset_stats(rt->context());
    Runner r(p, rt, jit);
    hj_record_enable(rt->context(), 1);
    auto out = r.run(inputs);
    INFO((out ? "" : out.error().message));
    REQUIRE(out);
    int bad = 0;
    double ulp = c.out == "f32" ? 0.0 : c.out == "f16" ? 1.0 / 1024 : 1.0 / 128;
    for (size_t i = 0; i < want.size(); ++i) {
      double got = decode((*out)[0], i);
      bad += std::fabs(got - want[i]) > ulp * std::fabs(want[i]);
    }
    CHECK(bad == 0);
    CHECK(rt->stats().library_calls == 1);
    auto record = rt->recordLines();
    bool seen = false;
    for (const std::string &l : record) seen |= l.rfind("matmul batch=" + std::to_string(batch), 0) == 0;
    CHECK(seen);
    if (first.empty()) {
      first = record;
    } else {
      auto diff = compareRecords(first, record, "evaluator", "jit");
      INFO((diff ? *diff : ""));
      CHECK(!diff);
    }
  }
}

// The inputs of Config{}'s program with a bias (a 5 x 7, b 7 x 4, bias 4,
// d 5 x 4), from `seed`.
struct LayerInputs {
  std::vector<Tensor> t;
  std::vector<DLTensor> dl;
  std::vector<const DLTensor *> ptrs;
  LayerInputs(const std::shared_ptr<Runtime> &rt, unsigned seed) {
    std::mt19937 g(seed);
    for (auto [shape, n] : {std::pair{std::vector<int64_t>{5, 7}, 35}, std::pair{std::vector<int64_t>{7, 4}, 28},
                            std::pair{std::vector<int64_t>{4}, 4}, std::pair{std::vector<int64_t>{5, 4}, 20}}) {
      auto x = Tensor::fromHost(rt, shape, dyadic(n, g));
      REQUIRE(x);
      t.push_back(std::move(*x));
    }
    for (Tensor &x : t) dl.push_back(x.dl());
    for (const DLTensor &x : dl) ptrs.push_back(&x);
  }
  std::span<const DLTensor *const> span() const { return ptrs; }
};

}  // namespace

TEST_CASE("matmul: every transpose, with bias, alpha and beta, f32", "[matmul]") {
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      Config c;
      c.ta = ta, c.tb = tb;
      check(c);
      c.bias = true, c.alpha = 0.5, c.beta = 0.25;
      check(c);
    }
}

TEST_CASE("matmul: batches, and a matrix shared across the batch", "[matmul]") {
  for (auto [ra, rb] : {std::pair{3u, 3u}, std::pair{3u, 2u}, std::pair{2u, 3u}}) {
    Config c;
    c.rankA = ra, c.rankB = rb, c.batch = 3;
    c.tb = rb == 3;
    check(c);
  }
}

TEST_CASE("matmul: f16 and bf16 inputs, f32 or their own dtype out", "[matmul]") {
  for (const char *in : {"f16", "bf16"})
    for (bool own : {false, true}) {
      Config c;
      c.in = in;
      c.out = own ? in : "f32";
      c.bias = true;
      c.m = 6, c.n = 9, c.k = 11;
      check(c);
    }
}

TEST_CASE("matmul: shapes that disagree at run time name the statement, evaluator and JIT alike", "[matmul]") {
  Program p = parseOk(
      "func @main(%a: f32[?, ?], %b: f32[?, ?]) -> (f32[?, ?]) {\n  %m = size %a, 0\n  %n = size %b, 1\n"
      "  %c = alloc f32[%m, %n]\n  matmul %a, %b, %c\n  return %c\n}\n",
      "bad.hir");
  std::string first;
  for (bool jit : {false, true}) {
    auto rt = makeRuntime();
    std::mt19937 g(3);
    auto a = Tensor::fromHost(rt, {4, 5}, dyadic(20, g));
    auto b = Tensor::fromHost(rt, {6, 3}, dyadic(18, g));
    REQUIRE(a);
    REQUIRE(b);
    DLTensor ad = a->dl(), bd = b->dl();
    const DLTensor *inputs[] = {&ad, &bd};
    Runner r(p, rt, jit);
    auto out = r.run(inputs);
    REQUIRE(!out);
    CHECK(out.error().message ==
          "matmul of @main at bad.hir:5:3: op(A) is 4 x 5 and op(B) is 6 x 3: A's columns must be B's rows");
    CHECK(rt->stats().live_bytes == 0);
  }
}

TEST_CASE("matmul: graph mode holds it as a node, replayed with moving inputs", "[matmul][graph]") {
  Config c;
  c.bias = true, c.beta = 0.5;
  Program p = parseOk(program(c));
  for (bool jit : {false, true}) {
    INFO((jit ? "jit" : "eval"));
    auto rt = makeRuntime();
    Runner eager(p, rt, jit), graph(p, rt, jit, OptLevel::O2, true);
    for (int call = 0; call < 4; ++call) {
      // New inputs (new addresses, new values) on every call.
      LayerInputs in(rt, 100 + call);
      auto inputs = in.span();
      auto want = eager.run(inputs);
      auto got = graph.run(inputs);
      INFO((got ? "" : got.error().message));
      REQUIRE(want);
      REQUIRE(got);
      CHECK(floats((*got)[0]) == floats((*want)[0]));
    }
    CHECK(rt->stats().graph_builds == 1);
    CHECK(rt->stats().graph_replays == 4);
    CHECK(rt->stats().graph_fallbacks == 0);
    CHECK(rt->stats().library_calls == 8);  // the eager calls and the graph's, fast replays too
  }
}

// c = a[:, :len] @ b[:len, :len + 1], a being 2 x w: one matmul whose
// sizes change with %len (1 to w). With `scaled`, 2c is returned, made by
// a kernel whose grid changes with %len too.
std::string growingMatmul(int w, bool scaled) {
  std::string W = std::to_string(w), W1 = std::to_string(w + 1);
  std::string s = scaled ? "kernel @scale_vec(ptr<f32>, ptr<f32>, i64, f32) {\n  host = \"scale_vec\"\n}\n\n" : "";
  s += "func @main(%a: f32[2, " + W + "], %b: f32[" + W + ", " + W1 + "], %len: i64) -> (f32[2, ?]) {\n" +
       "  %av = view %a[2, %len] strides[" + W + ", 1]\n  %n = add %len, 1\n  %bv = view %b[%len, %n] strides[" + W1 +
       ", 1]\n  %c = alloc f32[2, %n]\n  matmul %av, %bv, %c\n";
  if (!scaled) return s + "  return %c\n}\n";
  return s + "  %m = mul %n, 2\n  %y = alloc f32[2, %n]\n" +
         "  launch @scale_vec grid(%n, 1, 1) block(2, 1, 1) smem(0) (%c, %y, %m, 2.0)\n  free %c\n  return %y\n}\n";
}

// growingMatmul(w) run eagerly and in graph mode on one runtime (made when
// the fixture is, so that the environment set before it applies): call()
// checks graph mode's output against eager's and returns graph mode's
// outcome (hj_graph_outcome).
struct GrowingMatmul {
  GrowingMatmul(bool jit, unsigned seed, int w = 20, bool scaled = false)
      : p(parseOk(growingMatmul(w, scaled), "grow.hir")),
        rt(makeRuntime()),
        eager(p, rt, jit),
        graph(p, rt, jit, OptLevel::O2, true) {
    std::mt19937 g(seed);
    auto ta = Tensor::fromHost(rt, {2, w}, dyadic(2 * size_t(w), g));
    auto tb = Tensor::fromHost(rt, {w, w + 1}, dyadic(size_t(w) * (w + 1), g));
    REQUIRE(ta);
    REQUIRE(tb);
    a = std::move(*ta);
    b = std::move(*tb);
  }
  std::string call(int64_t len) {
    INFO("length " << len);
    DLTensor ad = a->dl(), bd = b->dl();
    const DLTensor *inputs[] = {&ad, &bd};
    ScalarArg scalars[] = {ScalarArg::i64(len)};
    auto want = eager.run(inputs, scalars);
    auto got = graph.run(inputs, scalars);
    INFO((got ? "" : got.error().message));
    REQUIRE(want);
    REQUIRE(got);
    CHECK((*got)[0].sizes() == std::vector<int64_t>{2, len + 1});
    CHECK(floats((*got)[0]) == floats((*want)[0]));
    return hj_graph_outcome(rt->context());
  }
  Program p;
  std::shared_ptr<Runtime> rt;
  Runner eager, graph;
  std::optional<Tensor> a, b;
};

TEST_CASE("matmul: graph mode keeps one graph while the sizes change, as a decode loop's do", "[matmul][graph]") {
  // The sizes of a matmul are not part of the shape of work: each new size
  // is bound to the graph already built and its node set anew, also when
  // its operands' addresses are the same (views of the same inputs here,
  // as a decode loop's intermediates keep their slots): a node is set for
  // new sizes, not only for new addresses. (Every launch captures its one
  // matmul anew, so HOSTJIT_GRAPH_RECAPTURE_PERCENT is off: the next test
  // has it on.)
  for (bool jit : {false, true}) {
    INFO((jit ? "jit" : "eval"));
    ScopedEnv graphAlways("HOSTJIT_GRAPH_RECAPTURE_PERCENT", "0");
    GrowingMatmul m(jit, 17);
    std::string ways;
    for (int64_t len : {3, 4, 5, 9, 6, 17, 20}) ways += std::to_string(len) + ": " + m.call(len) + "\n";
    INFO(ways);
    // One build, and one more when the update policy sees every launch
    // needing updates (graph-mode.md, "Updates at launch").
    CHECK(m.rt->stats().graph_builds == 2);
    CHECK(ways.find("built again to take its node updates at launch") != std::string::npos);
    CHECK(m.rt->stats().graph_reuses == 6);
  }
}

TEST_CASE("matmul: graph launches that capture every matmul anew give way to eager calls", "[matmul][graph]") {
  // The one matmul changes its sizes on every call, so each graph launch
  // captures all of the graph's library calls anew: after 4 such launches
  // new signatures run eagerly (HOSTJIT_GRAPH_RECAPTURE_PERCENT, 33 by
  // default), one in eight still traced, with eager's results throughout.
  // Lengths that come back are traced, then replay their graphs.
  for (bool jit : {false, true}) {
    INFO((jit ? "jit" : "eval"));
    ScopedEnv recaptureRuleAlone("HOSTJIT_GRAPH_MIN_LAUNCHES", "0");  // one launch: that rule would apply too
    GrowingMatmul m(jit, 23);
    std::vector<std::string> ways;
    auto call = [&](int64_t len) { ways.push_back(m.call(len)); };
    for (int64_t len = 1; len <= 19; ++len) call(len);
    std::string all;
    for (const std::string &w : ways) all += w + "\n";
    INFO(all);
    // Built by the first call, bound and set by the next four (each a
    // launch that captured its matmul anew); eager from the sixth on, but
    // for the calls traced one in eight.
    for (int i = 1; i <= 4; ++i) CHECK(ways[i].rfind("new signature: bound to a cached graph", 0) == 0);
    int eagerCalls = 0;
    for (size_t i = 5; i < ways.size(); ++i) eagerCalls += ways[i].rfind("eager: graph mode does not pay", 0) == 0;
    CHECK(eagerCalls == 13);  // of 14: the eighth traced
    CHECK(m.rt->stats().graph_fallbacks == 13);
    CHECK_THAT(hj_graph_reason(m.rt->context()),
               Catch::StartsWith("graph mode does not pay for this program: its last "));
    CHECK_THAT(hj_graph_reason(m.rt->context()), Catch::EndsWith("(HOSTJIT_GRAPH_RECAPTURE_PERCENT=33)"));
    // The lengths again, as a cycle of sizes comes back: one run eagerly is
    // traced now and bound to the graph, one traced before replays; the
    // third time every length replays, with nothing to capture.
    size_t first = ways.size();
    for (int64_t len = 1; len <= 19; ++len) call(len);
    for (size_t i = first; i < ways.size(); ++i) CHECK(ways[i].rfind("eager", 0) != 0);
    first = ways.size();
    for (int64_t len = 1; len <= 19; ++len) call(len);
    for (size_t i = first; i < ways.size(); ++i) CHECK(ways[i].rfind("fast replay", 0) == 0);
    CHECK(m.rt->stats().live_bytes == 0);
  }
}

TEST_CASE("matmul: sizes that come back get graphs of their own beside one taking updates at launch",
          "[matmul][graph]") {
  // 100 lengths, three rounds: more than kOwnGraphsBesideDeviceUpdates
  // (64), which caps the graphs of their own that signatures coming back
  // get beside a graph taking its kernel nodes' updates at launch. That
  // cap is priced for kernel nodes; a matmul node holding other sizes is
  // captured anew on the host at every launch, so each length that comes
  // back gets its own graph (within graph memory), and the third round
  // replays every length with nothing captured anew: only the output's
  // new address is set, at launch.
  for (bool jit : {false, true}) {
    INFO((jit ? "jit" : "eval"));
    ScopedEnv graphAlways("HOSTJIT_GRAPH_RECAPTURE_PERCENT", "0");
    ScopedEnv deviceUpdates("HOSTJIT_GRAPH_DEVICE_UPDATES", "1");
    ScopedEnv oneLaunch("HOSTJIT_GRAPH_MIN_LAUNCHES", "0");
    GrowingMatmul m(jit, 29, 100, /*scaled=*/true);
    hj_stats before{};
    for (int round = 0; round < 3; ++round) {
      if (round == 2) before = m.rt->stats();
      for (int64_t len = 1; len <= 100; ++len) {
        std::string way = m.call(len);
        // The output's new address, set in the kernel node at launch.
        if (round == 2) CHECK(way == "fast replay: 1 nodes updated (1 at launch)");
      }
    }
    hj_stats s = m.rt->stats();
    CHECK(s.graph_builds - before.graph_builds == 0);
    CHECK(s.graph_updates - before.graph_updates == 100);
    CHECK(s.graph_device_updates - before.graph_device_updates == 100);
    CHECK(s.graph_grid_updates == before.graph_grid_updates);
    CHECK(s.graph_fallbacks == 0);
  }
}

TEST_CASE("matmul: a failure injected at every operation frees everything", "[matmul][inject]") {
  Config c;
  c.bias = true, c.beta = 0.5;
  Program p = parseOk(program(c));
  for (bool jit : {false, true}) {
    auto rt = makeRuntime();
    LayerInputs in(rt, 9);
    auto inputs = in.span();
    Runner r(p, rt, jit);
    uint64_t ops = injectEverywhere(*rt, [&] { return r.run(inputs); }, jit ? "matmul (jit)" : "matmul (eval)");
    CHECK(ops >= 4);
  }
}

TEST_CASE("matmul: a bias that is not contiguous is refused on every path, never read past", "[matmul]") {
  Config c;
  c.bias = true;
  Program p = parseOk(program(c));
  auto rt = makeRuntime();
  LayerInputs in(rt, 21);
  std::mt19937 g(5);
  // A stride-2 view of 8 elements, and a broadcast (stride 0) of one.
  auto wide = Tensor::fromHost(rt, {8}, dyadic(8, g));
  auto one = Tensor::fromHost(rt, {1}, dyadic(1, g));
  REQUIRE(wide);
  REQUIRE(one);
  int64_t four[1] = {4}, two[1] = {2}, zero[1] = {0};
  DLTensor strided = wide->dl(), broadcast = one->dl();
  strided.shape = four, strided.strides = two;
  broadcast.shape = four, broadcast.strides = zero;
  for (auto [bias, stride] : {std::pair{&strided, 2}, std::pair{&broadcast, 0}})
    for (bool jit : {false, true})
      for (bool graph : {false, true}) {
        INFO((jit ? "jit" : "eval") << (graph ? ", graph" : "") << ", stride " << stride);
        Runner r(p, rt, jit, OptLevel::O2, graph);
        const DLTensor *inputs[] = {in.ptrs[0], in.ptrs[1], bias, in.ptrs[3]};
        auto out = r.run(inputs);
        REQUIRE(!out);
        CHECK_THAT(out.error().message,
                   Catch::StartsWith("matmul of @main at test.hir:") &&
                       Catch::EndsWith(": the bias has a stride of " + std::to_string(stride) +
                                       "; a matmul reads its 4 elements adjacent (stride 1): give it a contiguous copy"));
        CHECK(rt->stats().graph_builds == 0);
      }
  // The same bias made contiguous runs.
  Runner r(p, rt, true);
  CHECK(r.run(in.span()));
}

TEST_CASE("matmul: C that shares memory with A, B or the bias is refused", "[matmul]") {
  // C is the caller's: the verifier cannot see where it is.
  Program p = parseOk(
      "func @main(%a: f32[?, ?], %b: f32[?, ?], %bias: f32[?], %c: f32[?, ?] written) -> () {\n"
      "  matmul %a, %b, %c bias %bias\n  return\n}\n",
      "overlap.hir");
  auto rt = makeRuntime();
  std::mt19937 g(8);
  // One block of 16 rows of 4: A is rows 0-4, B rows 5-8, the bias row 9.
  auto block = Tensor::fromHost(rt, {16, 4}, dyadic(64, g));
  REQUIRE(block);
  DLTensor base = block->dl();
  int64_t a5x4[2] = {5, 4}, b4x4[2] = {4, 4}, bias4[1] = {4}, c5x4[2] = {5, 4};
  auto at = [&](int64_t row, int64_t *shape, int ndim) {
    DLTensor t = base;
    t.byte_offset = static_cast<uint64_t>(row) * 4 * sizeof(float);
    t.strides = nullptr;
    t.shape = shape;
    t.ndim = ndim;
    return t;
  };
  DLTensor a = at(0, a5x4, 2), b = at(5, b4x4, 2), bias = at(9, bias4, 1);
  struct Case {
    int64_t row;  // where C starts: 5 x 4 from there
    const char *reader;
  } cases[] = {{1, "A"}, {4, "A"}, {6, "B"}, {7, "B"}, {9, "the bias"}};
  for (bool jit : {false, true}) {
    Runner r(p, rt, jit);
    for (const Case &k : cases) {
      INFO((jit ? "jit" : "eval") << ", C at row " << k.row);
      DLTensor cv = at(k.row, c5x4, 2);
      const DLTensor *inputs[] = {&a, &b, &bias, &cv};
      auto out = r.run(inputs);
      REQUIRE(!out);
      CHECK(out.error().message == "matmul of @main at overlap.hir:2:3: C's memory overlaps " + std::string(k.reader) +
                                       "'s; a matmul reads " + k.reader +
                                       " while it writes C, so C must be a buffer of its own");
    }
    // A C of its own runs.
    auto other = Tensor::fromHost(rt, {5, 4}, dyadic(20, g));
    REQUIRE(other);
    DLTensor cv = other->dl();
    const DLTensor *inputs[] = {&a, &b, &bias, &cv};
    CHECK(r.run(inputs));
  }
}
