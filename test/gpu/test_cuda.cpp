// test_cuda.cpp - the CUDA backend on a real GPU: results against the CPU
// references, evaluator/JIT parity, the allocation contract, CHECK_ZEROED.
#define CATCH_CONFIG_EXTERNAL_INTERFACES
#include <catch2/catch.hpp>
#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>

#include "hostjit/exec/evaluator.h"
#include "hostjit/exec/host_data.h"
#include "hostjit/jit.h"
#include "hostjit/exec/parity.h"
#include "hostjit/text/text.h"
#include "gpu_helpers.h"
#include "reference.h"

using namespace hostjit;
using namespace hostjit::gputest;

namespace {

const std::string kExamples = sourceDir() + "/examples";


}  // namespace

CATCH_REGISTER_LISTENER(JitTeardown)

TEST_CASE("examples match the CPU reference on the GPU, eval and jit in parity", "[cuda]") {
  for (const std::string &name : examples::exampleNames()) {
    for (const examples::ExampleCase &c : examples::exampleCases(kExamples, name)) {
      Program p = load(c.file);
      auto rtEval = cudaRuntime(), rtJit = cudaRuntime();
      auto ev = Evaluator::create(p, rtEval);
      REQUIRE(ev);
      CompileOptions co;
      co.useCache = false;
      co.tiered = false;
      auto cp = jit().compile(p, rtJit, co);
      REQUIRE(cp);
      auto inputs = InputSet::random(rtEval, ev->plan(), c.shapes, 21);
      REQUIRE(inputs);
      hj_record_enable(rtEval->context(), 1);
      hj_record_enable(rtJit->context(), 1);
      auto a = ev->run(inputs->span(), c.scalars);
      auto b = (*cp)->run(inputs->span(), c.scalars);
      REQUIRE(a);
      REQUIRE(b);
      INFO(name);
      CHECK(examples::checkExample(c, *inputs, *a) == "");
      CHECK(examples::checkExample(c, *inputs, *b) == "");
      auto rec = compareRecords(rtEval->recordLines(), rtJit->recordLines());
      CHECK(!rec);
      if (rec) WARN(*rec);
      auto outs = compareOutputs(*a, *b);
      CHECK(!outs);
      if (outs) WARN(*outs);
      // Later calls reuse pooled and arena memory and still compute the same.
      for (int i = 0; i < 3; ++i) {
        auto again = (*cp)->run(inputs->span(), c.scalars);
        REQUIRE(again);
        CHECK(!compareOutputs(*b, *again));
      }
      a->clear();
      b->clear();
      CHECK(rtEval->stats().live_bytes == 0);
      CHECK(rtJit->stats().live_bytes == 0);
    }
  }
}

TEST_CASE("100 calls: resets_to_zero buffers take one memset, zero_init one per call", "[cuda]") {
  struct Case {
    const char *name;
    uint64_t memsets;
  } cases[] = {{"grid_sum", 1}, {"splitk", 1}, {"pipeline", 100}};
  for (const Case &k : cases) {
    const examples::ExampleCase c = examples::exampleCases(kExamples, k.name)[1];
    Program p = load(c.file);
    for (bool useJit : {false, true}) {
      auto rt = cudaRuntime();
      auto ev = Evaluator::create(p, rt);
      REQUIRE(ev);
      CompileOptions co;
      co.useCache = false;
      co.tiered = false;
      auto cp = jit().compile(p, rt, co);
      REQUIRE(cp);
      auto inputs = InputSet::random(rt, ev->plan(), c.shapes, 5);
      REQUIRE(inputs);
      uint64_t backendAllocsAfterFirst = 0;
      for (int i = 0; i < 100; ++i) {
        auto out = useJit ? (*cp)->run(inputs->span(), c.scalars) : ev->run(inputs->span(), c.scalars);
        REQUIRE(out);
        if (i == 99) CHECK(examples::checkExample(c, *inputs, *out) == "");
        out->clear();
        CHECK(rt->stats().live_bytes == 0);  // memory returns to the pool after every call
        if (i == 0) backendAllocsAfterFirst = rt->stats().backend_allocs;
      }
      INFO(k.name << (useJit ? " jit" : " eval"));
      hj_stats s = rt->stats();
      CHECK(s.memsets == k.memsets);
      CHECK(s.backend_allocs == backendAllocsAfterFirst);  // steady state: no new device memory
      int32_t zero = 0;
      REQUIRE(hj_arena_check_zero(rt->context(), &zero) == HJ_OK);
      CHECK(zero == 1);
    }
  }
}

TEST_CASE("HOSTJIT_CHECK_ZEROED catches a CUDA kernel that leaves its semaphore non-zero", "[cuda]") {
  Program p = load(sourceDir() + "/test/gpu/programs/leaves_nonzero.hir");
  for (bool useJit : {false, true}) {
    auto rt = cudaRuntime(1);
    Runner runner(p, rt, useJit);
    auto out = runner.run();
    REQUIRE(!out);
    CHECK(out.error().status == HJ_ERR_NOT_ZEROED);
    CHECK(out.error().message.find("buffer %sem (i32, 8 bytes, zero_init resets_to_zero) was not zero when freed") !=
          std::string::npos);
    CHECK(out.error().message.find("@leaves_nonzero") != std::string::npos);
    int32_t zero = 0;
    REQUIRE(hj_arena_check_zero(rt->context(), &zero) == HJ_OK);
    CHECK(zero == 1);
    CHECK(rt->stats().live_bytes == 0);
  }
}

TEST_CASE("launch errors name the kernel, the dims and the driver's error", "[cuda]") {
  const char *text = R"(kernel @grid_sum(ptr<f32>, ptr<f32>, ptr<f32>, ptr<i32>, i64) {
  cuda = "kernels/grid_sum.cu"
  entry = "grid_sum"
}
func @main(%x: f32[?]) -> (f32[1]) {
  %y = alloc f32[1]
  %w = alloc f32[1]
  %s = alloc i32[1] zero_init resets_to_zero
  launch @grid_sum grid(1, 1, 1) block(256, 1, 1) smem(400000) (%x, %y, %w, %s, 1)
  free %w
  free %s
  return %y
}
)";
  Diagnostics d;
  Program p = parse(text, kExamples + "/inline.hir", d);
  REQUIRE(d.empty());
  auto rt = cudaRuntime();
  auto ev = Evaluator::create(p, rt);
  REQUIRE(ev);
  auto inputs = InputSet::random(rt, ev->plan(), {{"x", {4}}}, 1);
  REQUIRE(inputs);
  auto out = ev->run(inputs->span());
  REQUIRE(!out);
  CHECK(out.error().message.find("@grid_sum") != std::string::npos);
  CHECK(out.error().message.find("CUDA_ERROR_") != std::string::npos);
  CHECK(rt->stats().live_bytes == 0);
}

TEST_CASE("tensor-struct arguments reach a CUDA kernel with their sizes and strides", "[cuda]") {
  Program p = load(sourceDir() + "/test/gpu/programs/tensor_struct.hir");
  for (bool useJit : {false, true}) {
    auto rt = cudaRuntime();
    Runner runner(p, rt, useJit);
    auto plan = makePlan(p);
    REQUIRE(plan);
    auto inputs = InputSet::random(rt, *plan, {{"x", {6, 4}}}, 9);
    REQUIRE(inputs);
    auto out = runner.run(inputs->span());
    REQUIRE(out);
    auto values = [&](size_t i) {
      auto h = (*out)[i].toHost();
      REQUIRE(h);
      std::vector<int64_t> v(6);
      std::memcpy(v.data(), h->data(), 48);
      return v;
    };
    float last;
    std::memcpy(&last, inputs->hostData(0).data() + 23 * 4, 4);
    CHECK(values(0) == std::vector<int64_t>{1, 6, 4, 4, 1, static_cast<int64_t>(1000 * last)});
    CHECK(values(1) == std::vector<int64_t>{1, 4, 6, 1, 4, 0});
  }
}

TEST_CASE("a kernel that includes the C library headers runs, with int and float scalars made by the program", "[cuda]") {
  Program p = load(sourceDir() + "/test/gpu/programs/library_headers.hir");
  for (bool useJit : {false, true}) {
    auto rt = cudaRuntime();
    Runner runner(p, rt, useJit);
    auto plan = makePlan(p);
    REQUIRE(plan);
    auto inputs = InputSet::random(rt, *plan, {{"x", {37}}}, 4);
    REQUIRE(inputs);
    auto out = runner.run(inputs->span());
    REQUIRE(out);
    auto h = (*out)[0].toHost();
    REQUIRE(h);
    std::vector<double> v(10);
    std::memcpy(v.data(), h->data(), 80);
    float m = -3.4e38f;
    for (int i = 0; i < 37; ++i) {
      float xi;
      std::memcpy(&xi, inputs->hostData(0).data() + 4 * i, 4);
      m = std::max(m, xi);
    }
    CHECK(v[0] == m);
    CHECK(v[1] == std::sqrt(37.0));
    CHECK(v[2] == static_cast<double>(1.0f / std::sqrt(37.0f)));
    CHECK(v[3] == 3.14159265358979323846);
    CHECK(v[4] == 2147483647.0);
    CHECK(v[5] == 8.0);
    CHECK(v[6] == 1.0);
    CHECK(v[7] == 1.0);
    CHECK(v[8] == 2.220446049250313e-16);
    CHECK(v[9] == 9223372036854775807.0);
  }
}

TEST_CASE("Tensor::fromHost puts host data in GPU memory; a program reads it there", "[cuda]") {
  Program p = load(kExamples + "/streams.hir");
  auto rt = cudaRuntime();
  std::vector<float> xs(1000);
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = 0.25f + static_cast<float>(i % 97) / 8;
  auto x = Tensor::fromHost(rt, {1000}, xs);
  REQUIRE(x);
  DLTensor xd = x->dl();
  CHECK(xd.device.device_type == kDLCUDA);
  const DLTensor *inputs[] = {&xd};
  ScalarArg scalars[] = {ScalarArg::f32(2.0f), ScalarArg::f32(-0.5f)};
  for (bool useJit : {false, true}) {
    Runner runner(p, rt, useJit);
    auto out = runner.run(inputs, scalars);
    REQUIRE(out);
    auto h = (*out)[0].toHost();
    REQUIRE(h);
    std::vector<float> y(1000);
    std::memcpy(y.data(), h->data(), 4000);
    for (size_t i = 0; i < xs.size(); ++i) CHECK(y[i] == 2.0f * xs[i] + -0.5f * xs[i]);
  }
  uint64_t before = rt->stats().live_bytes;
  x = Error{};  // frees the input's GPU memory
  CHECK(rt->stats().live_bytes == before);
}

TEST_CASE("the caller's CUDA context stays current, and a foreign stream is refused", "[cuda]") {
  // The application's own context (not the primary one hostjit uses).
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  REQUIRE(lib);
  using CtxCreate = int (*)(void **, unsigned, int);
  using CtxGet = int (*)(void **);
  using CtxSet = int (*)(void *);
  using CtxDestroy = int (*)(void *);
  using StreamCreate = int (*)(void **, unsigned);
  using StreamDestroy = int (*)(void *);
  auto ctxCreate = reinterpret_cast<CtxCreate>(dlsym(lib, "cuCtxCreate_v2"));
  auto ctxGet = reinterpret_cast<CtxGet>(dlsym(lib, "cuCtxGetCurrent"));
  auto ctxSet = reinterpret_cast<CtxSet>(dlsym(lib, "cuCtxSetCurrent"));
  auto ctxDestroy = reinterpret_cast<CtxDestroy>(dlsym(lib, "cuCtxDestroy_v2"));
  auto streamCreate = reinterpret_cast<StreamCreate>(dlsym(lib, "cuStreamCreate"));
  auto streamDestroy = reinterpret_cast<StreamDestroy>(dlsym(lib, "cuStreamDestroy_v2"));
  REQUIRE((ctxCreate && ctxGet && ctxSet && ctxDestroy && streamCreate && streamDestroy));
  void *mine = nullptr;
  REQUIRE(ctxCreate(&mine, 0, 0) == 0);  // also makes it current
  void *foreignStream = nullptr;
  REQUIRE(streamCreate(&foreignStream, 1) == 0);

  Program p = load(kExamples + "/grid_sum.hir");
  {
    auto rt = cudaRuntime();
    auto ev = Evaluator::create(p, rt);
    REQUIRE(ev);
    auto inputs = InputSet::random(rt, ev->plan(), {{"x", {64, 64}}}, 3);
    REQUIRE(inputs);
    REQUIRE(ctxSet(mine) == 0);
    auto out = ev->run(inputs->span());
    REQUIRE(out);
    void *current = nullptr;
    REQUIRE(ctxGet(&current) == 0);
    CHECK(current == mine);  // hostjit put the application's context back
  }
  hj_options o;
  hj_options_init(&o);
  o.backend = HJ_BACKEND_CUDA;
  o.stream = foreignStream;
  hj_context *ctx = nullptr;
  CHECK(hj_context_create(&o, &ctx) == HJ_ERR_INVALID_ARGUMENT);
  CHECK(std::string(hj_last_error()).find("belongs to another CUDA context") != std::string::npos);
  REQUIRE(ctxSet(mine) == 0);
  streamDestroy(foreignStream);
  ctxDestroy(mine);
}
