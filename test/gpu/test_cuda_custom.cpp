// test_cuda_custom.cpp - custom calls on the GPU: examples/custom_call.hir
// with the example's axpy (its own PTX kernel launched on hostjit's stream),
// evaluator and JIT, eager and in graph mode (a child graph captured from
// the function's launch, captured again when the inputs move), against a
// reference computed here; a call that is not capturable runs eagerly in
// graph mode, saying why.
#define CATCH_CONFIG_EXTERNAL_INTERFACES
#include <catch2/catch.hpp>

#include <fstream>
#include <random>
#include <sstream>

#include "gpu_helpers.h"

using namespace hostjit;
using namespace hostjit::gputest;

extern "C" int32_t hj_example_axpy(const hj_custom_call_args *call, char *error, uint64_t cap);

namespace {

std::vector<float> randomFloats(size_t n, unsigned seed) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<float> u(0.25f, 2.0f);
  std::vector<float> v(n);
  for (float &f : v) f = u(g) * (g() % 2 ? 1.0f : -1.0f);
  return v;
}

// out = 2y; out += 0.5x; out[2i] += -1 * x[i]: each step exact in f32 up to
// the one rounding of its add, as the GPU's fma makes it.
std::vector<float> reference(const std::vector<float> &x, const std::vector<float> &y) {
  size_t n = x.size();
  std::vector<float> out(n);
  for (size_t i = 0; i < n; ++i) out[i] = 2.0f * y[i] + 0.5f * x[i];
  for (size_t i = 0; i < (n + 1) / 2; ++i) out[2 * i] = out[2 * i] - x[i];
  return out;
}

std::string readText(const std::string &file) {
  std::ifstream in(file);
  REQUIRE(in);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::shared_ptr<Runtime> customRuntime() {
  auto rt = cudaRuntime();
  REQUIRE(hj_register_custom_call(rt->context(), "hj_example_axpy", &hj_example_axpy) == HJ_OK);
  return rt;
}

// Runs examples/custom_call.hir on x and y and checks its output against
// the reference.
void checkExample(Runner &run, const std::shared_ptr<Runtime> &rt, const std::vector<float> &xv,
                  const std::vector<float> &yv) {
  auto x = Tensor::fromHost(rt, {int64_t(xv.size())}, xv);
  auto y = Tensor::fromHost(rt, {int64_t(yv.size())}, yv);
  REQUIRE(x);
  REQUIRE(y);
  DLTensor xd = x->dl(), yd = y->dl();
  const DLTensor *inputs[] = {&xd, &yd};
  auto out = run.run(inputs);
  INFO((out ? "" : out.error().message));
  REQUIRE(out);
  CHECK(hostFloats((*out)[0]) == reference(xv, yv));
}

}  // namespace

TEST_CASE("custom call on the GPU: the example's axpy between kernels, eager and graph mode", "[cuda][custom]") {
  std::string file = sourceDir() + "/examples/custom_call.hir";
  Program p = load(file);
  eachPath([&](bool useJit, bool graph) {
    auto rt = customRuntime();
    Runner run(p, rt, useJit, graph);
    // Four calls of one size (new inputs each time: the nodes' addresses
    // change), then another size.
    for (size_t n : {size_t(1000), size_t(1000), size_t(1000), size_t(1000), size_t(4097)}) {
      checkExample(run, rt, randomFloats(n, unsigned(n) + 1), randomFloats(n, unsigned(n) + 2));
    }
    hj_stats s = rt->stats();
    CHECK(s.library_calls == 10);
    CHECK(s.launches == 5);
    if (graph) {
      // 4097 is bound to 1000's graph: its kernel's grid and the custom
      // call's child graph set anew.
      CHECK(s.graph_builds == 1);
      CHECK(s.graph_reuses == 1);
      CHECK(s.graph_fallbacks == 0);
      CHECK(s.graph_replays == 5);
    }
  });
}

TEST_CASE("custom call on the GPU: not capturable, graph mode runs the program eagerly", "[cuda][custom]") {
  std::string file = sourceDir() + "/examples/custom_call.hir";
  std::string text = readText(file);
  text.replace(text.find("  capturable = true"), std::string("  capturable = true").size(), "");
  Program p = parseText(text, file);
  for (bool useJit : {false, true}) {
    INFO((useJit ? "jit" : "eval"));
    auto rt = customRuntime();
    Runner run(p, rt, useJit, /*graph=*/true);
    for (int call = 0; call < 3; ++call) {
      checkExample(run, rt, randomFloats(300, 5), randomFloats(300, 6));
    }
    CHECK(rt->stats().graph_builds == 0);
    CHECK(rt->stats().graph_fallbacks == 3);
    CHECK_THAT(std::string(hj_graph_reason(rt->context())), Catch::Contains("may not be captured into a graph"));
  }
}
