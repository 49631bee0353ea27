// test_views.cpp - views at an element offset: what they read and write on
// the evaluator, the JIT and graph mode (moving inputs, changing shapes, a
// recorded replay), as launch pointers, tensor structs and matmul operands;
// the verifier's and the run-time checks of a view past its root; text; a
// fusion's alias output with an offset on every path, executors too.
#include <random>

#include "common/fusion_cases.h"
#include "helpers.h"
#include "hostjit/text/text.h"

using namespace hostjit;
using namespace hostjit::test;

namespace {

const std::string kProgram = readFile(std::string(HOSTJIT_SOURCE_DIR) + "/test/programs/view_offset.hir");

// Random non-zero multiples of 1/8: their products and sums are exact in f32.
std::vector<float> dyadic(size_t n, std::mt19937 &g) {
  std::uniform_int_distribution<int> u(1, 16);
  std::vector<float> v(n);
  for (float &x : v) x = static_cast<float>(u(g)) / 8.0f * (u(g) % 2 ? 1.0f : -1.0f);
  return v;
}

struct Inputs {
  int64_t rows;
  std::vector<float> x, w;
  std::vector<Tensor> t;
  std::vector<DLTensor> dl;
  std::vector<const DLTensor *> ptrs;
  Inputs(const std::shared_ptr<Runtime> &rt, int64_t r, unsigned seed) : rows(r) {
    std::mt19937 g(seed);
    x = dyadic(rows * 4, g);
    w = dyadic(20, g);
    for (auto [shape, v] : {std::pair{std::vector<int64_t>{rows, 4}, &x}, std::pair{std::vector<int64_t>{5, 4}, &w}}) {
      auto h = Tensor::fromHost(rt, shape, *v);
      REQUIRE(h);
      t.push_back(std::move(*h));
    }
    for (Tensor &h : t) dl.push_back(h.dl());
    for (const DLTensor &d : dl) ptrs.push_back(&d);
  }
};

// What view_offset.hir computes, from the inputs alone.
void checkOutputs(const Inputs &in, const std::vector<Tensor> &out) {
  REQUIRE(out.size() == 4);
  std::vector<float> cat = in.x;
  cat.insert(cat.end(), in.x.begin(), in.x.end());
  CHECK(floats(out[0]) == cat);
  std::vector<float> c(in.rows * 4);
  for (int64_t i = 0; i < in.rows; ++i)
    for (int64_t j = 0; j < 4; ++j) {
      float s = 0;
      for (int64_t k = 0; k < 4; ++k) s += in.x[i * 4 + k] * in.w[(1 + k) * 4 + j];
      c[i * 4 + j] = s;
    }
  CHECK(floats(out[1]) == c);
  std::vector<int64_t> d = elements<int64_t>(out[2]);
  CHECK(d == std::vector<int64_t>{1, 1, 4, 4, 1, static_cast<int64_t>(1000 * in.x[in.rows * 4 - 1])});
  CHECK(floats(out[3]) == std::vector<float>(in.w.begin() + 8, in.w.begin() + 16));
}

}  // namespace

TEST_CASE("views at an offset: slices of inputs and buffers read and write where they say", "[views]") {
  Program p = parseOk(kProgram, "view_offset.hir");
  for (bool jit : {false, true}) {
    INFO((jit ? "jit" : "eval"));
    auto rt = makeRuntime();
    Runner r(p, rt, jit);
    for (int64_t rows : {6, 1, 3}) {
      Inputs in(rt, rows, 7 + static_cast<unsigned>(rows));
      auto out = r.run(in.ptrs);
      INFO((out ? "" : out.error().message));
      REQUIRE(out);
      checkOutputs(in, *out);
    }
  }
}

TEST_CASE("views at an offset: graph mode patches input slices as their inputs move and shapes change",
          "[views][graph]") {
  Program p = parseOk(kProgram, "view_offset.hir");
  for (bool jit : {false, true}) {
    for (bool record : {false, true}) {  // recorded: a replay that runs the program finds the slices itself
      INFO((jit ? "jit" : "eval") << (record ? ", recorded" : ""));
      auto rt = makeRuntime();
      Runner graph(p, rt, jit, OptLevel::O2, true);
      int call = 0;
      for (int64_t rows : {6, 6, 6, 2, 2, 6}) {
        // New tensors (new addresses, new values) on every call.
        Inputs in(rt, rows, 100 + static_cast<unsigned>(call++));
        hj_record_enable(rt->context(), record ? 1 : 0);
        auto out = graph.run(in.ptrs);
        INFO((out ? "" : out.error().message));
        REQUIRE(out);
        checkOutputs(in, *out);
      }
      hj_record_enable(rt->context(), 0);
      CHECK(rt->stats().graph_fallbacks == 0);
      CHECK(rt->stats().graph_replays == 6);
    }
  }
}

TEST_CASE("views at an offset: one past its root is refused before any call, on every path", "[views]") {
  // %tail takes x's last %k elements from %k on: past x's end when 2k > n.
  Program p = parseOk(R"(kernel @copy_f32(ptr<f32>, ptr<f32>, i64) {
  host = "copy_f32"
}

func @main(%x: f32[?], %k: i64) -> (f32[?]) {
  %y = alloc f32[%k]
  %tail = view %x[%k] offset %k
  launch @copy_f32 grid(1, 1, 1) block(1, 1, 1) smem(0) (%tail, %y, %k)
  return %y
}
)",
                      "tail.hir");
  for (bool jit : {false, true})
    for (bool graph : {false, true}) {
      INFO((jit ? "jit" : "eval") << (graph ? ", graph" : ""));
      auto rt = makeRuntime();
      Runner r(p, rt, jit, OptLevel::O2, graph);
      std::mt19937 g(3);
      auto x = Tensor::fromHost(rt, {10}, dyadic(10, g));
      REQUIRE(x);
      DLTensor xd = x->dl();
      const DLTensor *inputs[] = {&xd};
      for (int64_t k : {5, 6, 2}) {
        INFO("k = " << k);
        ScalarArg s[] = {ScalarArg::i64(k)};
        hj_reset_stats(rt->context());
        auto out = r.run(inputs, s);
        if (2 * k <= 10) {
          REQUIRE(out);
          std::vector<float> all = floats(*x);
          CHECK(floats((*out)[0]) == std::vector<float>(all.begin() + k, all.begin() + 2 * k));
          continue;
        }
        REQUIRE(!out);
        CHECK(out.error().message ==
              "view %tail (tail.hir:7:3) runs past the memory of its root %x: its offset, extents and strides reach "
              "further than the root's extents and strides");
        CHECK(rt->stats().allocs == 0);
        CHECK(rt->stats().launches == 0);
      }
    }
}

TEST_CASE("views at an offset: the verifier refuses constant ones past their root and negative offsets", "[views]") {
  auto problems = verifierProblems(R"(func @main(%x: f32[4, 4]) -> () {
  %b = alloc f32[10]
  %ok = view %b[2, 3] strides[3, 1] offset 4
  %past = view %b[2, 3] strides[3, 1] offset 5
  %chain = view %ok[4] offset 3
  %input = view %x[8] offset 9
  %neg = view %b[2] offset -1
  %huge = view %b[2, 2] strides[4611686018427387904, 1]
  %empty = view %b[0, 3] offset 100
  free %b
  return
}
)");
  CHECK(problems == std::vector<std::string>{
                        "4:3: view %past takes elements 5 to 10 of its root %b, which holds 10",
                        "5:3: view %chain takes elements 7 to 10 of its root %b, which holds 10",
                        "7:28: view offset must be >= 0, got -1",
                        "8:3: view %huge reaches more than 2^62 elements: its extents and strides overflow",
                    });
}

TEST_CASE("views of a parameter: checked at each call against the caller's memory and strides", "[views]") {
  // %x is declared f32[2, 4]; %rows reads its rows 16 elements apart, which
  // a slice of a wider tensor holds and a contiguous one does not. The
  // verifier cannot know which a caller passes.
  Program p = parseOk(R"(kernel @copy_f32(ptr<f32>, ptr<f32>, i64) {
  host = "copy_f32"
}

func @main(%x: f32[2, 4]) -> (f32[?]) {
  %y = alloc f32[8]
  %rows = view %x[2, 4] strides[16, 1]
  launch @copy_f32 grid(1, 1, 1) block(1, 1, 1) smem(0) (%rows, %y, 8)
  return %y
}
)",
                      "rows.hir");
  for (bool jit : {false, true})
    for (bool graph : {false, true}) {
      INFO((jit ? "jit" : "eval") << (graph ? ", graph" : ""));
      auto rt = makeRuntime();
      Runner r(p, rt, jit, OptLevel::O2, graph);
      std::mt19937 g(5);
      std::vector<float> data = dyadic(20, g);
      auto wide = Tensor::fromHost(rt, {20}, data);
      REQUIRE(wide);
      // The slice [:, :4] of a 2 x 16 tensor (padded to 20): it holds the view.
      DLTensor slice = wide->dl();
      int64_t shape[] = {2, 4}, strides[] = {16, 1};
      slice.ndim = 2;
      slice.shape = shape;
      slice.strides = strides;
      const DLTensor *sliced[] = {&slice};
      hj_reset_stats(rt->context());
      auto out = r.run(sliced, {});
      REQUIRE(out);
      CHECK(floats((*out)[0]) == std::vector<float>(data.begin(), data.begin() + 8));
      // A contiguous [2, 4] tensor holds 8 elements: refused before any call.
      auto packed = Tensor::fromHost(rt, {2, 4}, std::vector<float>(data.begin(), data.begin() + 8));
      REQUIRE(packed);
      DLTensor pd = packed->dl();
      const DLTensor *contiguous[] = {&pd};
      hj_reset_stats(rt->context());
      auto refused = r.run(contiguous, {});
      REQUIRE(!refused);
      CHECK(refused.error().message ==
            "view %rows (rows.hir:7:3) runs past the memory of its root %x: its offset, extents and strides reach "
            "further than the root's extents and strides");
      CHECK(rt->stats().allocs == 0);
      CHECK(rt->stats().launches == 0);
    }
}

TEST_CASE("views at an offset: printed and parsed back", "[views][text]") {
  Program p = parseOk(kProgram, "view_offset.hir");
  std::string text = print(p);
  CHECK(text.find("%hi = view %cat[%n] offset %n\n") != std::string::npos);
  CHECK(text.find("%row = view %a[1, 4] strides[4, 1] offset %at\n") != std::string::npos);
  CHECK(text.find("%lo = view %cat[%n]\n") != std::string::npos);  // offset 0 is not written
  CHECK(print(parseOk(text)) == text);
}

TEST_CASE("views at an offset: an input inside a sliced input's memory runs the call eagerly", "[views][graph]") {
  Program p = parseOk(kProgram, "view_offset.hir");
  for (bool jit : {false, true}) {
    INFO((jit ? "jit" : "eval"));
    auto rt = makeRuntime();
    Runner graph(p, rt, jit, OptLevel::O2, true);
    std::mt19937 g(11);
    std::vector<float> all = dyadic(24, g);
    auto big = Tensor::fromHost(rt, {24}, all);
    REQUIRE(big);
    // w is elements 0 to 19; x, one row, is elements 8 to 11: inside w,
    // past the start of the slices the program takes of w.
    DLTensor w = big->dl(), x = big->dl();
    int64_t wShape[] = {5, 4}, xShape[] = {1, 4};
    w.ndim = x.ndim = 2;
    w.strides = x.strides = nullptr;
    w.shape = wShape;
    x.shape = xShape;
    x.byte_offset = 8 * sizeof(float);
    const DLTensor *inputs[] = {&x, &w};
    for (int call = 0; call < 2; ++call) {
      auto out = graph.run(inputs);
      INFO((out ? "" : out.error().message));
      REQUIRE(out);
      Inputs want(rt, 1, 0);
      want.x.assign(all.begin() + 8, all.begin() + 12);
      want.w.assign(all.begin(), all.begin() + 20);
      checkOutputs(want, *out);
    }
    CHECK(rt->stats().graph_replays == 0);
    CHECK(rt->stats().launches == 10);  // five per call, made eagerly
  }
}

TEST_CASE("views at an offset: a matmul may write one slice of a buffer while it reads another", "[views]") {
  auto problems = verifierProblems(R"(func @main(%x: f32[4, 4]) -> () {
  %qkv = alloc f32[3, 4, 4]
  %q = view %qkv[4, 4]
  %k = view %qkv[4, 4] offset 16
  %v = view %qkv[4, 4] offset 32
  matmul %q, %k, %v
  %w = view %qkv[4, 4] offset 28
  matmul %q, %k, %w
  free %qkv
  return
}
)");
  CHECK(problems == std::vector<std::string>{
                        "8:18: matmul's C %w is in the memory of B, %k; a matmul reads B while it writes C, so C must "
                        "be a buffer of its own",
                    });
}

TEST_CASE("views at an offset: a fusion's alias output with an offset, on every path", "[views][fusion]") {
  auto f = parseFusionJson(R"J({
    "name": "tail",
    "inputs": [{"name": "x", "dtype": "f32", "dims": ["?"]}],
    "outputs": ["out"],
    "kernels": [{"name": "copy", "params": ["ptr<f32>", "ptr<f32>", "i64"], "host": "copy_f32"}],
    "segments": [
      {"name": "slice", "inputs": ["x"],
       "outputs": [{"name": "tail", "dtype": "f32", "extents": ["size(x, 0) - 3"], "alias_of": "x", "offset": 3}]},
      {"name": "copy", "kernel": "copy", "inputs": ["tail"],
       "outputs": [{"name": "out", "dtype": "f32", "extents": ["size(tail, 0)"]}],
       "scalars": ["size(tail, 0)"], "launch": {"grid": [1, 1, 1], "block": [1, 1, 1]}}
    ]})J",
                          "tail.json");
  INFO((f ? "" : f.error().message));
  REQUIRE(f);
  auto lowered = lowerFusion(*f);
  REQUIRE(lowered);
  auto plan = makePlan(*lowered);
  REQUIRE(plan);
  std::mt19937 g(21);
  std::vector<float> x = dyadic(11, g);
  std::vector<unsigned char> bytes(x.size() * 4);
  std::memcpy(bytes.data(), x.data(), bytes.size());
  auto rt = makeRuntime();
  auto in = InputSet::fromHost(rt, *plan, {{11}}, {bytes});
  REQUIRE(in);
  for (Path path : kPaths) {
    INFO(pathName(path));
    PathRunner r(*f, path, makeRuntime(), sharedJit());
    auto out = r.run(*in, {});
    INFO((out ? "" : out.error().message));
    REQUIRE(out);
    CHECK(floats((*out)[0]) == std::vector<float>(x.begin() + 3, x.end()));
  }
  auto bad = parseFusionJson(R"({"inputs": [{"name": "x", "dtype": "f32", "dims": [4]}], "outputs": ["x"],
    "segments": [{"inputs": ["x"], "outputs": [{"name": "y", "dtype": "f32", "extents": [4], "offset": 1}]}]})",
                             "bad.json");
  REQUIRE(!bad);
  CHECK(bad.error().message == "bad.json: segments[0].outputs[0].offset: only a view (an output with alias_of) has an offset");
}
