// test_inductor.cpp - the Inductor import (docs/inductor.md) on the host
// backend: a recorded linear layer with a Triton kernel run through its
// host stand-in, against a reference computed here, on the evaluator, the
// JIT and graph mode over changing sizes; extern matmul layouts; and every
// refusal naming where it stands.
#include <cmath>
#include <cstring>
#include <random>

#include "common/each_path.h"
#include "helpers.h"
#include "hostjit/exec/npy.h"
#include "hostjit/fusion/inductor.h"

using namespace hostjit;
using namespace hostjit::test;

namespace {

const std::string kDir = std::string(HOSTJIT_SOURCE_DIR) + "/test/lit/inputs/inductor/";

// Random non-zero multiples of 1/8: products and short sums exact in f32.
std::vector<float> dyadic(size_t n, std::mt19937 &g) {
  std::uniform_int_distribution<int> u(1, 16);
  std::vector<float> v(n);
  for (float &x : v) x = static_cast<float>(u(g)) / 8.0f * (u(g) % 2 ? 1.0f : -1.0f);
  return v;
}

Tensor hostTensor(const std::shared_ptr<Runtime> &rt, std::vector<int64_t> shape, const std::vector<float> &v) {
  auto t = Tensor::fromHost(rt, shape, v);
  REQUIRE(t);
  return std::move(*t);
}

// A description with the boilerplate around `body` and `outputs`.
std::string description(const std::string &inputs, const std::string &body, const std::string &outputs,
                        const std::string &extra = "") {
  return R"({"format": "hostjit.inductor/1", "name": "t", "inputs": [)" + inputs + "], " + extra + R"("body": [)" +
         body + R"(], "outputs": [)" + outputs + "]}";
}

// The tensor arguments a recorded call took (DIR/argI_1.npy for each I of
// `which`), as host tensors.
struct RecordedArgs {
  std::vector<Tensor> t;
  std::vector<DLTensor> dl;
  std::vector<const DLTensor *> ptrs;
  RecordedArgs(const std::shared_ptr<Runtime> &rt, const std::string &dir, std::vector<int> which) {
    for (int i : which) {
      auto a = readNpy(dir + "arg" + std::to_string(i) + "_1.npy");
      REQUIRE(a);
      auto x = Tensor::fromHost(rt, a->dtype, a->shape, a->data.data(), a->data.size());
      REQUIRE(x);
      t.push_back(std::move(*x));
    }
    for (Tensor &x : t) dl.push_back(x.dl());
    for (const DLTensor &d : dl) ptrs.push_back(&d);
  }
};

std::vector<float> npyFloats(const std::string &path) {
  auto a = readNpy(path);
  REQUIRE(a);
  std::vector<float> v(a->data.size() / 4);
  std::memcpy(v.data(), a->data.data(), a->data.size());
  return v;
}

// How many elements of got differ from want by more than 1e-5 of `scale`.
size_t farFrom(const std::vector<float> &got, const std::vector<float> &want, float scale) {
  REQUIRE(got.size() <= want.size());
  size_t bad = 0;
  for (size_t i = 0; i < got.size(); ++i) bad += std::fabs(got[i] - want[i]) > 1e-5f * scale;
  return bad;
}

// A program recorded on the H200: kDir/recorded/NAME/NAME.inductor.json.
InductorImport recorded(const std::string &name) {
  auto imported = loadInductor(kDir + "recorded/" + name + "/" + name + ".inductor.json");
  INFO((imported ? "" : imported.error().message));
  REQUIRE(imported);
  return std::move(*imported);
}

// The largest magnitude of v: the scale results are compared to.
float largest(const std::vector<float> &v) {
  float scale = 0;
  for (float x : v) scale = std::max(scale, std::fabs(x));
  return scale;
}

using testpaths::eachPath;  // common/each_path.h

// Runs recorded program NAME on its arguments `which` (DIR/argI_1.npy) on
// every path, each on a runtime of its own, and checks its first result
// against DIR/expected/EXPECTED within 1e-5 of the largest value, and that
// it is not all zeros.
void runsToRecorded(const std::string &name, std::vector<int> which, const std::string &expectedFile) {
  std::string dir = kDir + "recorded/" + name + "/";
  InductorImport imported = recorded(name);
  std::vector<float> expected = npyFloats(dir + "expected/" + expectedFile);
  float scale = largest(expected);
  eachPath([&](bool jit, bool graph) {
    auto rt = makeRuntime();
    Runner r(imported.program, rt, jit, OptLevel::O2, graph);
    RecordedArgs args(rt, dir, which);
    auto out = r.run(args.ptrs);
    INFO((out ? "" : out.error().message));
    REQUIRE(out);
    std::vector<float> got = floats((*out)[0]);
    REQUIRE(got.size() == expected.size());
    CHECK(farFrom(got, expected, scale) == 0);
    CHECK(got != std::vector<float>(got.size(), 0.0f));
  });
}

std::string importError(const std::string &text) {
  auto r = importInductor(text, kDir + "t.inductor.json");
  REQUIRE(!r);
  return r.error().message;
}

}  // namespace

TEST_CASE("inductor: a linear layer, in-place kernels and a written input, on every path", "[inductor]") {
  auto imported = loadInductor(kDir + "linear_add.inductor.json");
  INFO((imported ? "" : imported.error().message));
  REQUIRE(imported);
  const Program &p = imported->program;
  REQUIRE(imported->outputs.size() == 3);
  CHECK(!imported->outputs[0].fromInput);
  CHECK(imported->outputs[1].offset.str() == "2");
  CHECK(imported->outputs[2].fromInput);
  CHECK(imported->outputs[2].index == 3);
  CHECK(p.value(p.tensorInputs[3]).written);
  CHECK(p.kernels.at(0).block == std::array<int64_t, 3>{128, 1, 1});
  eachPath([&](bool jit, bool graph) {
    auto rt = makeRuntime();
    Runner r(p, rt, jit, OptLevel::O2, graph);
    unsigned seed = 1;
    for (int64_t rows : {5, 3, 5, 7}) {
      std::mt19937 g(seed++);
      std::vector<float> w = dyadic(32, g), b = dyadic(4, g), x = dyadic(rows * 8, g), res = dyadic(rows * 4, g);
      Tensor tw = hostTensor(rt, {4, 8}, w), tb = hostTensor(rt, {4}, b), tx = hostTensor(rt, {rows, 8}, x),
             tr = hostTensor(rt, {rows, 4}, res);
      DLTensor d[] = {tw.dl(), tb.dl(), tx.dl(), tr.dl()};
      const DLTensor *inputs[] = {&d[0], &d[1], &d[2], &d[3]};
      auto out = r.run(inputs);
      INFO((out ? "" : out.error().message));
      REQUIRE(out);
      // buf1 = 2 (x w^T + b + res); res' = buf1 + res.
      std::vector<float> buf1(rows * 4), res2(rows * 4);
      for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < 4; ++j) {
          float s = 0;
          for (int64_t k = 0; k < 8; ++k) s += x[i * 8 + k] * w[j * 8 + k];
          float y = (s + b[j]) + res[i * 4 + j];
          buf1[i * 4 + j] = y + y;
          res2[i * 4 + j] = buf1[i * 4 + j] + res[i * 4 + j];
        }
      CHECK(floats((*out)[0]) == buf1);
      CHECK(floats(tr) == res2);
    }
    if (graph) CHECK(rt->stats().graph_fallbacks == 0);
  });
}

TEST_CASE("inductor: extern matmuls in every layout Inductor passes", "[inductor]") {
  // A column-major C (computed as its transpose), bmm, baddbmm without a
  // bias (beta 0) and accumulating onto its output, addmm's expanded bias.
  std::string inputs = R"({"name": "a", "dtype": "f32", "sizes": [2, 3, 4]},
                          {"name": "b", "dtype": "f32", "sizes": [2, 4, 5]},
                          {"name": "bias", "dtype": "f32", "sizes": [5]})";
  std::string body = R"(
    {"op": "alloc", "name": "c", "dtype": "f32", "sizes": [3, 5], "strides": [1, 3]},
    {"op": "view", "name": "a0", "of": "a", "sizes": [3, 4], "strides": [4, 1]},
    {"op": "view", "name": "b0", "of": "b", "sizes": [4, 5], "strides": [5, 1]},
    {"op": "extern", "kernel": "mm", "inputs": ["a0", "b0"], "out": "c"},
    {"op": "alloc", "name": "d", "dtype": "f32", "sizes": [2, 3, 5]},
    {"op": "extern", "kernel": "bmm", "inputs": ["a", "b"], "out": "d"},
    {"op": "extern", "kernel": "baddbmm", "inputs": ["d", "a", "b"], "out": "d", "alpha": 0.5, "beta": 2},
    {"op": "alloc", "name": "e", "dtype": "f32", "sizes": [2, 3, 5]},
    {"op": "extern", "kernel": "baddbmm", "inputs": ["d", "a", "b"], "out": "e", "beta": 0},
    {"op": "view", "name": "rows", "of": "bias", "sizes": [3, 5], "strides": [0, 1]},
    {"op": "alloc", "name": "f", "dtype": "f32", "sizes": [3, 5]},
    {"op": "extern", "kernel": "addmm", "inputs": ["rows", "a0", "b0"], "out": "f", "workspace": 4096})";
  auto imported = importInductor(description(inputs, body, R"("c", "d", "e", "f")"), kDir + "t.inductor.json");
  INFO((imported ? "" : imported.error().message));
  REQUIRE(imported);
  std::string text = print(imported->program);
  INFO(text);
  CHECK(text.find("matmul %a0, %b0, %f bias %rows_row workspace %addmm_workspace") != std::string::npos);
  CHECK(text.find("%addmm_workspace = alloc u8[4096]") != std::string::npos);
  CHECK(text.find("free %addmm_workspace") != std::string::npos);
  auto rt = makeRuntime();
  std::mt19937 g(5);
  std::vector<float> a = dyadic(24, g), b = dyadic(40, g), bias = dyadic(5, g);
  Tensor ta = hostTensor(rt, {2, 3, 4}, a), tb = hostTensor(rt, {2, 4, 5}, b), tbias = hostTensor(rt, {5}, bias);
  DLTensor d[] = {ta.dl(), tb.dl(), tbias.dl()};
  const DLTensor *ins[] = {&d[0], &d[1], &d[2]};
  auto ab = [&](int64_t t, int64_t i, int64_t j) {
    float s = 0;
    for (int64_t k = 0; k < 4; ++k) s += a[(t * 3 + i) * 4 + k] * b[(t * 4 + k) * 5 + j];
    return s;
  };
  for (bool jit : {false, true}) {
    INFO((jit ? "jit" : "eval"));
    Runner r(imported->program, rt, jit);
    auto out = r.run(ins);
    INFO((out ? "" : out.error().message));
    REQUIRE(out);
    std::vector<float> c = floats((*out)[0]), dd = floats((*out)[1]), e = floats((*out)[2]), f = floats((*out)[3]);
    for (int64_t i = 0; i < 3; ++i)
      for (int64_t j = 0; j < 5; ++j) {
        CHECK(c[j * 3 + i] == ab(0, i, j));  // column-major
        CHECK(f[i * 5 + j] == ab(0, i, j) + bias[j]);
        for (int64_t t = 0; t < 2; ++t) {
          float once = ab(t, i, j), twice = 0.5f * once + 2.0f * once;
          CHECK(dd[(t * 3 + i) * 5 + j] == twice);
          CHECK(e[(t * 3 + i) * 5 + j] == once);
        }
      }
  }
}

TEST_CASE("inductor: addmm's whole-matrix bias is accumulated onto where it dies", "[inductor]") {
  // x @ w1 + x @ w2 as Inductor writes it: mm into p, addmm(p, x, w2) into
  // q, scaled (alpha 0.5, beta 2); q read through a view of an offset row.
  std::string inputs = R"({"name": "x", "dtype": "f32", "sizes": [3, 4]},
                          {"name": "w1", "dtype": "f32", "sizes": [4, 5]},
                          {"name": "w2", "dtype": "f32", "sizes": [4, 5]})";
  std::string body = R"(
    {"op": "alloc", "name": "p", "dtype": "f32", "sizes": [3, 5]},
    {"op": "extern", "kernel": "mm", "inputs": ["x", "w1"], "out": "p"},
    {"op": "alloc", "name": "q", "dtype": "f32", "sizes": [3, 5]},
    {"op": "extern", "kernel": "addmm", "inputs": ["p", "x", "w2"], "out": "q", "alpha": 0.5, "beta": 2},
    {"op": "view", "name": "last", "of": "q", "sizes": [5], "offset": 10})";
  auto imported = importInductor(description(inputs, body, R"("q", "last")"), kDir + "t.inductor.json");
  INFO((imported ? "" : imported.error().message));
  REQUIRE(imported);
  // One buffer: q's alloc is gone, the addmm accumulates onto p.
  std::string text = print(imported->program);
  INFO(text);
  CHECK(text.find("alloc") == text.rfind("alloc"));
  CHECK(text.find("matmul %x, %w2, %p alpha 0.5 beta 2") != std::string::npos);
  REQUIRE(imported->outputs.size() == 2);
  CHECK(imported->outputs[1].index == 0);
  CHECK(imported->outputs[1].offset.str() == "10");
  auto rt = makeRuntime();
  std::mt19937 g(8);
  std::vector<float> x = dyadic(12, g), w1 = dyadic(20, g), w2 = dyadic(20, g);
  Tensor tx = hostTensor(rt, {3, 4}, x), t1 = hostTensor(rt, {4, 5}, w1), t2 = hostTensor(rt, {4, 5}, w2);
  DLTensor d[] = {tx.dl(), t1.dl(), t2.dl()};
  const DLTensor *ins[] = {&d[0], &d[1], &d[2]};
  for (bool jit : {false, true}) {
    INFO((jit ? "jit" : "eval"));
    Runner r(imported->program, rt, jit);
    auto out = r.run(ins);
    INFO((out ? "" : out.error().message));
    REQUIRE(out);
    std::vector<float> q = floats((*out)[0]);
    for (int64_t i = 0; i < 3; ++i)
      for (int64_t j = 0; j < 5; ++j) {
        float a = 0, b = 0;
        for (int64_t k = 0; k < 4; ++k) a += x[i * 4 + k] * w1[k * 5 + j], b += x[i * 4 + k] * w2[k * 5 + j];
        CHECK(q[i * 5 + j] == 0.5f * b + 2.0f * a);
      }
  }
  // A bias read again later, or an input, stays refused.
  std::string later = body + R"(, {"op": "alloc", "name": "r", "dtype": "f32", "sizes": [3, 5]},
    {"op": "extern", "kernel": "mm", "inputs": ["p", "w1"], "out": "r"})";
  CHECK(importError(description(inputs, later, R"("q", "r")")) ==
        kDir + "t.inductor.json: body[3].beta: addmm with beta 2.000000 and a bias that is neither its output nor a "
               "buffer of its shape that dies at this call: hostjit's matmul adds a bias unscaled (beta 1) or scales "
               "C itself");
  std::string fromInput = R"({"op": "alloc", "name": "q", "dtype": "f32", "sizes": [3, 4]},
    {"op": "extern", "kernel": "addmm", "inputs": ["x", "x", "y"], "out": "q"})";
  CHECK(importError(description(R"({"name": "x", "dtype": "f32", "sizes": [3, 4]},
                                   {"name": "y", "dtype": "f32", "sizes": [4, 4]})", fromInput, R"("q")")) ==
        kDir + "t.inductor.json: body[1].inputs[0]: the bias of addmm is not one row (a vector, or a row expanded "
               "with stride 0), nor a buffer of the output's shape that dies at this call (the matmul would "
               "accumulate onto it): hostjit's matmul adds one row to every row");
}

namespace {

// A description whose kernel, the host stand-in triton_add, adds 8
// contiguous elements from x's data pointer to y (8): x's geometry and the
// symbols ("" or `"symbols": {...}, `) as given.
std::string sliceAdd(const std::string &xGeometry, const std::string &symbols) {
  return description(R"({"name": "x", "dtype": "f32", )" + xGeometry +
                         R"(}, {"name": "y", "dtype": "f32", "sizes": [8], "strides": [1]})",
                     R"({"op": "alloc", "name": "buf0", "dtype": "f32", "sizes": [8], "strides": [1]},
         {"op": "launch", "kernel": "add", "grid": [1, 1, 1], "args": ["x", "y", "buf0", 8]})",
                     R"("buf0")",
                     symbols + R"j("kernels": [{"name": "add", "triton": "kernels/add_kernel/add_kernel.json", )j"
                               R"j("host": "triton_add"}], )j");
}

// Runs a program of inputs x (2 x 4, a slice wide[:, :4] of a 2 x width
// tensor) and y (8) whose kernel, the host stand-in triton_add, adds 8
// contiguous elements from x's data pointer to y: the output must be
// wide's first 8 elements plus y.
template <class Rt>
void checkSliceAdd(Runner &r, const Rt &rt, int64_t width) {
  INFO("width " << width);
  std::mt19937 g(static_cast<unsigned>(width));
  std::vector<float> wide = dyadic(size_t(2 * width), g), y = dyadic(8, g);
  Tensor tw = hostTensor(rt, {2, width}, wide), ty = hostTensor(rt, {8}, y);
  DLTensor xd = tw.dl();
  int64_t shape[2] = {2, 4}, strides[2] = {width, 1};
  xd.shape = shape;
  xd.strides = strides;
  DLTensor yd = ty.dl();
  const DLTensor *inputs[] = {&xd, &yd};
  auto out = r.run(inputs);
  INFO((out ? "" : out.error().message));
  REQUIRE(out);
  std::vector<float> want(8);
  for (size_t i = 0; i < 8; ++i) want[i] = wide[i] + y[i];
  CHECK(floats((*out)[0]) == want);
}

}  // namespace

TEST_CASE("inductor: an input with a symbol for its row stride reaches a kernel as its data pointer", "[inductor]") {
  // input_ids at batch 8 is a slice of a wider token buffer: Inductor
  // asserts its strides as (s1, 1) and its kernels index it with s1. The
  // kernel takes the slice's data pointer; a contiguous copy is not asked
  // for. The host stand-in adds n contiguous elements from that pointer.
  auto imported = importInductor(sliceAdd(R"("sizes": [2, "s0"], "strides": ["s1", 1])",
                                          R"j("symbols": {"s0": "size(x, 1)", "s1": "stride(x, 0)"}, )j"),
                                 kDir + "t.inductor.json");
  INFO((imported ? "" : imported.error().message));
  REQUIRE(imported);
  eachPath([&](bool jit, bool graph) {
    auto rt = makeRuntime();
    Runner r(imported->program, rt, jit, OptLevel::O2, graph);
    for (int64_t width : {6, 9}) checkSliceAdd(r, rt, width);
  });
}

TEST_CASE("inductor: an input with constant sizes and a wider row stride imports and runs", "[inductor]") {
  // The prompt at batch 8: input_ids is (8, 16) with strides (529, 1), all
  // constants. The verifier refused the view with those strides (its root,
  // declared f32[2, 4] here, holding 8 elements) and the graph ran through
  // Inductor; the caller's slice holds it, which each call checks.
  auto imported = importInductor(sliceAdd(R"("sizes": [2, 4], "strides": [16, 1])", ""), kDir + "t.inductor.json");
  INFO((imported ? "" : imported.error().message));
  REQUIRE(imported);
  eachPath([&](bool jit, bool graph) {
    auto rt = makeRuntime();
    Runner r(imported->program, rt, jit, OptLevel::O2, graph);
    checkSliceAdd(r, rt, 16);
    // A contiguous (2, 4) tensor does not hold rows 16 apart: refused.
    std::mt19937 g(4);
    Tensor packed = hostTensor(rt, {2, 4}, dyadic(8, g)), ty = hostTensor(rt, {8}, dyadic(8, g));
    DLTensor pd = packed.dl(), yd = ty.dl();
    const DLTensor *contiguous[] = {&pd, &yd};
    auto refused = r.run(contiguous);
    REQUIRE(!refused);
    CHECK(refused.error().message.find("runs past the memory of its root %x") != std::string::npos);
  });
}

TEST_CASE("inductor: what cannot be imported is refused, naming where it stands", "[inductor]") {
  std::string x = R"({"name": "x", "dtype": "f32", "sizes": ["s0", 4]})";
  std::string sym = R"J("symbols": {"s0": "size(x, 0)"}, )J";
  CHECK(importError(description(x, R"({"op": "alloc", "name": "y", "dtype": "f32", "sizes": ["s0", 4]},
      {"op": "extern", "kernel": "convolution", "inputs": ["x", "y"], "out": "y"})", R"("y")", sym)) ==
        kDir + "t.inductor.json: body[1].kernel: extern kernel 'convolution' is not one hostjit maps (mm, addmm, "
               "bmm, baddbmm): the program cannot be imported whole");
  CHECK(importError(description(x, R"({"op": "alloc", "name": "y", "dtype": "f32", "sizes": ["s1", 4]})", R"("y")",
                                sym)) ==
        kDir + "t.inductor.json: body[0].sizes[0]: 's1' is no scalar input and no size symbol: no input determines it");
  CHECK(importError(description(x, R"({"op": "view", "name": "v", "of": "z", "sizes": [4]})", R"("x")", sym)) ==
        kDir + "t.inductor.json: body[0].of: 'z' is no tensor made before this point (an input, or an alloc or view "
               "earlier in the body)");
  CHECK(importError(R"({"format": "hostjit.inductor/9", "inputs": [], "body": [], "outputs": []})") ==
        kDir + "t.inductor.json: format: 'hostjit.inductor/9' is not a format this hostjit reads (hostjit.inductor/1)");
  std::string missing = importError(description(x, "", R"("x")",
                                                R"("kernels": [{"name": "k", "triton": "kernels/none/k.json"}], )"));
  CHECK(missing.rfind(kDir + "t.inductor.json: kernels[0].triton: ", 0) == 0);
  CHECK(missing.find("kernels/none/k.json") != std::string::npos);
  std::string past = importError(description(
      R"({"name": "x", "dtype": "f32", "sizes": [4, 4]})",
      R"({"op": "alloc", "name": "y", "dtype": "f32", "sizes": [4, 4]},
         {"op": "view", "name": "v", "of": "y", "sizes": [8], "offset": 10}, {"op": "extern", "kernel": "mm",
          "inputs": ["x", "x"], "out": "y"})", R"("y")"));
  INFO(past);
  CHECK(past.find("error: view %v takes elements 10 to 17 of its root %y, which holds 16") != std::string::npos);
  CHECK(importError(description(R"({"name": "x", "dtype": "f32", "sizes": [4, 4]}, {"name": "b", "dtype": "f32", "sizes": [4]})",
                                R"({"op": "alloc", "name": "y", "dtype": "f32", "sizes": [4, 4]},
      {"op": "extern", "kernel": "addmm", "inputs": ["b", "x", "x"], "out": "y", "beta": 0.5})", R"("y")")) ==
        kDir + "t.inductor.json: body[1].beta: addmm with beta 0.500000 and a bias that is neither its output nor "
               "a buffer of its shape that dies at this call: hostjit's matmul adds a bias unscaled (beta 1) or "
               "scales C itself");
  CHECK(importError(description(R"({"name": "x", "dtype": "f32", "sizes": [4, 4]})",
                                R"({"op": "alloc", "name": "y", "dtype": "f32", "sizes": [4, 4]},
      {"op": "extern", "kernel": "mm", "inputs": ["x", "x"], "out": "y", "workspace": -1})", R"("y")")) ==
        kDir + "t.inductor.json: body[1].workspace: expected the workspace's bytes, an integer >= 0, got -1");
  std::string launch = importError(description(x, R"({"op": "launch", "kernel": "add", "grid": [1, 1, 1], "args": ["x"]})",
                                               R"("x")", sym + R"("kernels": [{"name": "add", "triton": "kernels/add_kernel/add_kernel.json"}], )"));
  CHECK(launch == kDir + "t.inductor.json: body[0].args: @add takes 4 arguments (its scratch pointers come on their "
                         "own), got 1");
}

TEST_CASE("inductor: the recorded MLP runs on the host backend to the H200's outputs", "[inductor]") {
  // Recorded on the H200 (bench/RESULTS.md): the arguments Inductor's call
  // took and the result it returned; the Triton kernel runs through its
  // host stand-in, the matmuls through the host's, which sum in another
  // order than cuBLAS and cuBLASLt: equal to a few ulps of the largest value.
  runsToRecorded("mlp", {0, 1, 2, 3, 4}, "buf2.npy");
}

TEST_CASE("inductor: the recorded SGD step updates its inputs in place on the host backend", "[inductor]") {
  // m' = 0.9 m + g and p' = p - 0.01 m' written into the caller's p and m;
  // the sum of p' returned, as the H200 summed it to 1e-5 of its scale.
  std::string dir = kDir + "recorded/sgd/";
  InductorImport imported = recorded("sgd");
  const Program &p = imported.program;
  CHECK(p.value(p.tensorInputs[0]).written);
  CHECK(!p.value(p.tensorInputs[1]).written);
  CHECK(p.value(p.tensorInputs[2]).written);
  float recorded = npyFloats(dir + "expected/buf0.npy").at(0);
  eachPath([&](bool jit, bool graph) {
    auto rt = makeRuntime();
    Runner r(p, rt, jit, OptLevel::O2, graph);
    RecordedArgs args(rt, dir, {0, 1, 2});  // arg0_1 m, arg1_1 g, arg2_1 p
    std::vector<float> m = floats(args.t[0]), g = floats(args.t[1]), w = floats(args.t[2]);
    for (int step = 0; step < 2; ++step) {
      float scale = 0;
      for (size_t i = 0; i < w.size(); ++i) {
        m[i] = m[i] * 0.9f + g[i];
        w[i] = w[i] + m[i] * -0.01f;
        scale += std::fabs(w[i]);
      }
      auto out = r.run(args.ptrs);
      INFO((out ? "" : out.error().message));
      REQUIRE(out);
      CHECK(floats(args.t[0]) == m);
      CHECK(floats(args.t[2]) == w);
      float sum = floats((*out)[0]).at(0);
      if (step == 0) CHECK(std::fabs(sum - recorded) <= 1e-5f * scale);
    }
  });
}

TEST_CASE("inductor: the recorded dynamic-shape program serves other shapes on the host backend", "[inductor]") {
  // Layer norm and GELU over [s77, 64], s77 = 24 when it was recorded: the
  // one program runs 24 rows and the first 7 of them (graph mode over both
  // shapes), each row as the H200 made it, to 1e-5 of the largest value
  // (the host's sums, rsqrt and erf round differently).
  std::string dir = kDir + "recorded/dynamic_ln_gelu/";
  InductorImport imported = recorded("dynamic_ln_gelu");
  std::vector<float> expected = npyFloats(dir + "expected/buf3.npy");
  REQUIRE(expected.size() == 24 * 64);
  float scale = largest(expected);
  eachPath([&](bool jit, bool graph) {
    auto rt = makeRuntime();
    Runner r(imported.program, rt, jit, OptLevel::O2, graph);
    RecordedArgs args(rt, dir, {1, 2, 3});
    for (int64_t rows : {24, 7, 24, 7}) {
      INFO(rows << " rows");
      int64_t shape[] = {rows, 64};
      DLTensor x = args.dl[0];
      x.shape = shape;
      x.strides = nullptr;
      const DLTensor *ins[] = {&x, args.ptrs[1], args.ptrs[2]};
      ScalarArg s77[] = {ScalarArg::i64(rows)};
      auto out = r.run(ins, s77);
      INFO((out ? "" : out.error().message));
      REQUIRE(out);
      std::vector<float> got = floats((*out)[0]);
      REQUIRE(got.size() == static_cast<size_t>(rows * 64));
      CHECK(farFrom(got, expected, scale) == 0);
    }
    if (graph) CHECK(rt->stats().graph_fallbacks == 0);
  });
}

TEST_CASE("inductor: the recorded cross-entropy runs on the host backend to the H200's loss", "[inductor]") {
  // Two kernels: each row's softmax statistics into two [32, 1] buffers
  // stored column-major, then the mean NLL written in place into a reused
  // buffer (in_out_ptr). Within 1e-5 of the loss (exp and log round
  // differently on the host).
  std::string dir = kDir + "recorded/cross_entropy/";
  InductorImport imported = recorded("cross_entropy");
  float recorded = npyFloats(dir + "expected/buf2.npy").at(0);
  eachPath([&](bool jit, bool graph) {
    auto rt = makeRuntime();
    Runner r(imported.program, rt, jit, OptLevel::O2, graph);
    RecordedArgs args(rt, dir, {0, 1});
    for (int call = 0; call < 2; ++call) {
      auto out = r.run(args.ptrs);
      INFO((out ? "" : out.error().message));
      REQUIRE(out);
      float loss = floats((*out)[0]).at(0);
      CHECK(std::fabs(loss - recorded) <= 1e-5f * std::max(1.0f, std::fabs(recorded)));
    }
  });
}

TEST_CASE("inductor: the recorded attention runs on the host backend to the H200's output", "[inductor]") {
  // A qkv linear (mm of a transposed weight), q, k and v split out with
  // their bias, two bmm, softmax in place, heads merged; the output a view
  // of a reused buffer. Within 1e-5 of the largest value.
  runsToRecorded("attention", {0, 1, 2}, "buf2.npy");
}
