// test_cuda_graph.cpp - graph mode on a real GPU (CUDA graphs): the examples
// against their CPU references and eager calls, inputs and outputs at new
// addresses, the fill and zero flags as memset nodes, HOSTJIT_CHECK_ZEROED,
// failures at every operation, and 8 threads with a context and stream each.
#define CATCH_CONFIG_EXTERNAL_INTERFACES
#include <catch2/catch.hpp>

#include <cstring>
#include <thread>

#include "common/inject.h"
#include "gpu_helpers.h"
#include "hostjit/exec/evaluator.h"
#include "hostjit/exec/host_data.h"
#include "hostjit/exec/parity.h"
#include "reference.h"

using namespace hostjit;
using namespace hostjit::gputest;

namespace {

const std::string kExamples = sourceDir() + "/examples";

std::shared_ptr<Runtime> cudaRuntimeWith(int32_t fillNan, int32_t checkZeroed) {
  hj_options o;
  hj_options_init(&o);
  o.backend = HJ_BACKEND_CUDA;
  o.check_zeroed = checkZeroed;
  o.fill_nan = fillNan;
  o.reuse_zeroed_memory = 0;
  auto rt = Runtime::create(o);
  INFO((rt ? "" : rt.error().message));
  REQUIRE(rt);
  return *rt;
}

}  // namespace

TEST_CASE("graph mode on the GPU: examples match the CPU reference and eager calls, at moving addresses",
          "[cuda][graph]") {
  for (const std::string &name : examples::exampleNames()) {
    for (const examples::ExampleCase &c : examples::exampleCases(kExamples, name)) {
      Program p = load(c.file);
      for (bool useJit : {false, true}) {
        INFO(name << (useJit ? " (jit)" : " (eval)"));
        auto rt = cudaRuntime(), eagerRt = cudaRuntime();
        Runner graph(p, rt, useJit, true), eager(p, eagerRt, useJit, false);
        auto plan = makePlan(p);
        REQUIRE(plan);
        std::vector<InputSet> inputs;
        for (uint64_t seed : {21, 22, 23}) inputs.push_back(std::move(*InputSet::random(rt, *plan, c.shapes, seed)));
        std::vector<std::vector<Tensor>> kept;
        // Same inputs, then other inputs (new addresses), outputs kept or dropped.
        for (int call = 0; call < 12; ++call) {
          const InputSet &in = inputs[static_cast<size_t>(call < 4 ? 0 : call % 3)];
          auto a = graph.run(in.span(), c.scalars);
          auto b = eager.run(in.span(), c.scalars);
          INFO("call " << call << (a ? "" : ": " + a.error().message));
          REQUIRE(a);
          REQUIRE(b);
          CHECK(examples::checkExample(c, in, *a) == "");
          auto diff = compareOutputs(*a, *b);
          INFO((diff ? *diff : ""));
          CHECK(!diff);
          if (call % 2) kept.push_back(std::move(*a));
        }
        kept.clear();
        hj_stats st = rt->stats();
        // One graph, built again to take its nodes' new addresses at launch
        // once 4 of its last 8 launches needed them (calls 4 to 11 move).
        CHECK(st.graph_builds <= 2);
        CHECK(st.graph_device_updates > 0);
        CHECK(st.graph_replays == 12);
        CHECK(st.graph_fallbacks == 0);
        CHECK(st.live_bytes == 0);
        // A replay skips the program unless a scalar only kernels see must be
        // computed (pipeline's).
        CHECK(st.graph_fast == (GraphSignature::of(*plan, nullptr)->fast ? 11u : 0u));
        int32_t zero = 0;
        REQUIRE(hj_arena_check_zero(rt->context(), &zero) == HJ_OK);
        CHECK(zero == 1);
      }
    }
  }
}

TEST_CASE("graph mode on the GPU: HOSTJIT_FILL_NAN fills as memset nodes, 1, 4 and 8 bytes wide", "[cuda][graph]") {
  std::string cu = sourceDir() + "/test/gpu/programs/copy_bytes.cu";
  Program p;
  {
    Diagnostics d;
    p = parse(R"(
kernel @copy_u8(ptr<u8>, ptr<u8>, i64) {
  cuda = ")" + cu + R"("
  entry = "copy_bytes"
}
kernel @copy_f32(ptr<f32>, ptr<u8>, i64) {
  cuda = ")" + cu + R"("
  entry = "copy_bytes"
}
kernel @copy_f64(ptr<f64>, ptr<u8>, i64) {
  cuda = ")" + cu + R"("
  entry = "copy_bytes"
}
func @main(%x: f32[?]) -> (u8[4], u8[16], u8[32], f64[4]) {
  %a = alloc u8[4]
  %b = alloc f32[4]
  %c = alloc f64[4]
  %oa = alloc u8[4] zero_init
  %ob = alloc u8[16] zero_init
  %oc = alloc u8[32] zero_init
  launch @copy_u8 grid(1, 1, 1) block(32, 1, 1) smem(0) (%a, %oa, 4)
  launch @copy_f32 grid(1, 1, 1) block(32, 1, 1) smem(0) (%b, %ob, 16)
  launch @copy_f64 grid(1, 1, 1) block(32, 1, 1) smem(0) (%c, %oc, 32)
  %od = alloc f64[4]
  free %a
  free %b
  free %c
  return %oa, %ob, %oc, %od
}
)",
              "fill.hir", d);
    INFO(d.format("fill.hir", p.source));
    REQUIRE(d.empty());
  }
  auto rt = cudaRuntimeWith(1, 0);
  Runner r(p, rt, true, true);
  auto plan = makePlan(p);
  REQUIRE(plan);
  auto in = InputSet::random(rt, *plan, {{"x", {3}}}, 1);
  REQUIRE(in);
  // The outputs are kept, so each call's are at new addresses: %od's fill
  // (two strided memset nodes for an 8-byte pattern) gets a new destination.
  std::vector<std::vector<Tensor>> kept;
  for (int call = 0; call < 4; ++call) {
    auto out = r.run(in->span());
    REQUIRE(out);
    auto a = (*out)[0].toHost(), b = (*out)[1].toHost(), c = (*out)[2].toHost(), od = (*out)[3].toHost();
    REQUIRE(od);
    for (size_t i = 0; i < 4; ++i) {
      uint64_t d;
      std::memcpy(&d, od->data() + 8 * i, 8);
      CHECK(d == 0x7FF8000000000000ull);
    }
    REQUIRE(a);
    REQUIRE(b);
    REQUIRE(c);
    CHECK(*a == std::vector<unsigned char>(4, 0xFF));
    for (size_t i = 0; i < 4; ++i) {
      uint32_t f;
      uint64_t d;
      std::memcpy(&f, b->data() + 4 * i, 4);
      std::memcpy(&d, c->data() + 8 * i, 8);
      CHECK(f == 0x7FC00000u);
      CHECK(d == 0x7FF8000000000000ull);
    }
    kept.push_back(std::move(*out));
  }
  CHECK(rt->stats().graph_replays == 4);
}

TEST_CASE("graph mode on the GPU: HOSTJIT_CHECK_ZEROED catches a kernel that leaves its semaphore non-zero",
          "[cuda][graph]") {
  Program p = load(sourceDir() + "/test/gpu/programs/leaves_nonzero.hir");
  auto rt = cudaRuntimeWith(0, 1);
  Runner r(p, rt, true, true);
  for (int call = 0; call < 2; ++call) {
    auto out = r.run({});
    REQUIRE(!out);
    CHECK(out.error().status == HJ_ERR_NOT_ZEROED);
    CHECK_THAT(out.error().message, Catch::Contains("buffer %sem (i32, 8 bytes, zero_init resets_to_zero) was not zero "
                                                    "after the graph ran"));
    int32_t zero = 0;
    REQUIRE(hj_arena_check_zero(rt->context(), &zero) == HJ_OK);
    CHECK(zero == 1);
  }
}

TEST_CASE("graph mode on the GPU: a failure at every operation, while building and while replaying",
          "[cuda][graph][inject]") {
  for (const std::string &name : examples::exampleNames()) {
    const examples::ExampleCase c = examples::exampleCases(kExamples, name).front();
    Program p = load(c.file);
    auto rt = cudaRuntime();
    Runner r(p, rt, true, true);
    auto plan = makePlan(p);
    REQUIRE(plan);
    auto in = InputSet::random(rt, *plan, c.shapes, 5);
    REQUIRE(in);
    test::injectEverywhere(*rt, [&] {
      hj_graph_clear(rt->context());
      return r.run(in->span(), c.scalars);
    }, std::string(name) + ", building");
    test::injectEverywhere(*rt, [&] { return r.run(in->span(), c.scalars); }, std::string(name) + ", replaying");
  }
}

TEST_CASE("graph mode on the GPU: 8 threads, one program, a context and a stream each, eager and graph",
          "[cuda][graph][threads]") {
  const examples::ExampleCase c = examples::exampleCases(kExamples, "grid_sum").back();
  Program p = load(c.file);
  auto shared = cudaRuntime();
  CompileOptions co;
  co.useCache = false;
  co.tiered = false;
  auto compiled = jit().compile(p, shared, co);
  REQUIRE(compiled);
  const CompiledProgram &cp = **compiled;
  // HOSTJIT_THREAD_CALLS lowers the count for compute-sanitizer's racecheck,
  // which runs a kernel hundreds of times slower.
  constexpr int kThreads = 8;
  const int kCalls = threadCalls(1000);
  std::vector<std::string> errors(kThreads);
  std::vector<hj_stats> stats(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      hj_options o;
      hj_options_init(&o);
      o.backend = HJ_BACKEND_CUDA;
      o.check_zeroed = o.fill_nan = o.reuse_zeroed_memory = 0;
      auto rt = Runtime::create(o);  // its own stream
      if (!rt) {
        errors[t] = rt.error().message;
        return;
      }
      hj_context *ctx = (*rt)->context();
      auto in = InputSet::random(*rt, cp.plan(), c.shapes, 100 + static_cast<uint64_t>(t));
      if (!in) {
        errors[t] = in.error().message;
        return;
      }
      float expected = 0;
      for (int call = 0; call < kCalls && errors[t].empty(); ++call) {
        bool graph = call % 2 == 0;
        void *outData[1];
        int64_t outDims[1];
        int32_t st = graph ? cp.callGraph(ctx, in->pointers().data(), nullptr, outData, outDims)
                           : cp.call(ctx, in->pointers().data(), nullptr, outData, outDims);
        if (st) {
          errors[t] = hj_last_error();
          break;
        }
        float got = 0;
        if (hj_copy_to_host(ctx, &got, outData[0], sizeof got) != HJ_OK) errors[t] = hj_last_error();
        if (call == 0) expected = got;
        else if (got != expected) errors[t] = "call " + std::to_string(call) + " gave another sum";
        hj_free(ctx, outData[0]);
      }
      hj_get_stats(ctx, &stats[t]);
    });
  for (auto &th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) {
    INFO("thread " << t);
    CHECK(errors[t] == "");
    CHECK(stats[t].graph_builds == 1);
    CHECK(stats[t].graph_replays == static_cast<uint64_t>(kCalls / 2));
    CHECK(stats[t].live_bytes == 0);
  }
}

namespace {

// A zeroed buffer (a memset node whose size changes) and three launches
// whose grids change, all sized by the extent of %x: y = 0.5 * (3 * x).
// boundsChecked: the kernels say so (they check i < total).
Program shapesProgram(bool boundsChecked = false) {
  std::string vec = sourceDir() + "/examples/kernels/vector.cu";
  std::string checked = boundsChecked ? "  bounds_checked = true\n" : "";
  return parseText("kernel @scale_vec(ptr<f32>, ptr<f32>, i64, f32) {\n  cuda = \"" + vec +
                   "\"\n  entry = \"scale_vec\"\n" + checked +
                   "}\n\nkernel @add_vec(ptr<f32>, ptr<f32>, ptr<f32>, i64) {\n  cuda = \"" + vec +
                   "\"\n  entry = \"add_vec\"\n" + checked + "}\n\n"
                   "func @main(%x: f32[?]) -> (f32[?]) {\n  %n = size %x, 0\n  %blocks = ceildiv %n, 256\n"
                   "  %a = alloc f32[%n] zero_init\n  %t = alloc f32[%n]\n  %y = alloc f32[%n]\n"
                   "  launch @scale_vec grid(%blocks, 1, 1) block(256, 1, 1) smem(0) (%x, %t, %n, 3.0)\n"
                   "  launch @add_vec grid(%blocks, 1, 1) block(256, 1, 1) smem(0) (%t, %a, %a, %n)\n"
                   "  launch @scale_vec grid(%blocks, 1, 1) block(256, 1, 1) smem(0) (%a, %y, %n, 0.5)\n"
                   "  free %t\n  free %a\n  return %y\n}\n");
}

// x of n elements for the shape tests (non-zero, not all equal).
std::vector<float> shapeInput(int64_t n) {
  std::vector<float> xv(static_cast<size_t>(n));
  for (int64_t k = 0; k < n; ++k) xv[size_t(k)] = 0.25f + float((k * 7919) % 101) / 16.0f;
  return xv;
}

// A CUDA runtime whose graph mode takes every call, however few the
// program's launches (HOSTJIT_GRAPH_MIN_LAUNCHES=0).
std::shared_ptr<Runtime> everyCallRuntime(int32_t fillNan = 0) {
  setenv("HOSTJIT_GRAPH_MIN_LAUNCHES", "0", 1);
  auto rt = cudaRuntimeWith(fillNan, 0);
  unsetenv("HOSTJIT_GRAPH_MIN_LAUNCHES");
  return rt;
}

// One graph-mode call of shapesProgram with x of n elements: its output
// must be the formula's.
void callShape(Runner &graph, const std::shared_ptr<Runtime> &rt, int64_t n) {
  INFO("n = " << n);
  std::vector<float> xv = shapeInput(n);
  auto x = Tensor::fromHost(rt, {n}, xv);
  REQUIRE(x);
  DLTensor xd = x->dl();
  const DLTensor *in[] = {&xd};
  auto out = graph.run(in);
  INFO((out ? "" : out.error().message));
  REQUIRE(out);
  std::vector<float> want(xv.size());
  for (size_t k = 0; k < xv.size(); ++k) want[k] = 0.5f * (3.0f * xv[k]);
  CHECK(hostFloats((*out)[0]) == want);
}

}  // namespace

TEST_CASE("graph mode on the GPU: a new extent on every call shares graphs of one shape of work", "[cuda][graph]") {
  // 40 extents, each bound to the graph with the closest grids and its
  // nodes set; with HOSTJIT_FILL_NAN the fills (8-byte patterns in two
  // strided memsets) change size too.
  Program p = shapesProgram();
  for (int32_t fillNan : {0, 1}) {
    for (bool useJit : {false, true}) {
      INFO((useJit ? "jit" : "eval") << (fillNan ? ", NaN fills" : ""));
      auto rt = everyCallRuntime(fillNan);
      Runner graph(p, rt, useJit, /*graph=*/true);
      for (int round = 0; round < 2; ++round)
        for (int i = 0; i < 40; ++i) callShape(graph, rt, 1 + (i * 37) % 3000);
      hj_stats s = rt->stats();
      // 40 new signatures (a refused node update builds anew); the cache (64)
      // holds them all, so the second round replays them.
      CHECK(s.graph_builds + s.graph_reuses >= 40);
      CHECK(s.graph_replays == 80);
      CHECK(s.graph_reuses > 0);
      CHECK(s.graph_fallbacks == 0);
      WARN("graph_builds " << s.graph_builds << ", graph_reuses " << s.graph_reuses << ", graph_updates "
                           << s.graph_updates);
    }
  }
}

TEST_CASE("graph mode on the GPU: a plan reserved for the largest extent neither grows nor moves", "[cuda][graph]") {
  // A decode-like loop (the extent grows by 97 each call, to 4000) after
  // reserving 4000: every call fits the plan made by the reservation, at
  // the same device addresses, and gives the formula's output.
  Program p = shapesProgram();
  for (bool useJit : {false, true}) {
    INFO((useJit ? "jit" : "eval"));
    auto rt = everyCallRuntime();
    Runner graph(p, rt, useJit, /*graph=*/true);
    hj_context *ctx = rt->context();
    auto one = Tensor::fromHost(rt, {1}, std::vector<float>{2.0f});
    REQUIRE(one);
    DLTensor bound = one->dl();
    int64_t most[1] = {4000};
    bound.shape = most;  // its data is not read: one float behind 4000
    const DLTensor *bin[] = {&bound};
    uint64_t launches = rt->stats().launches;
    auto r = graph.exe().reserveGraph(bin);
    INFO((r ? "" : r.error().message));
    REQUIRE(r);
    CHECK(rt->stats().launches == launches);
    uint64_t count = 0, block = 0, zeroedAt = 0;
    REQUIRE(hj_graph_plan_size(ctx, &count, &block, &zeroedAt) == HJ_OK);
    CHECK(block == 2 * 16384);  // %a and %t, 16000 bytes each, in 16384-byte slots
    for (int64_t n = 1; n <= 4000; n += 97) {
      callShape(graph, rt, n);
      CHECK_THAT(hj_graph_outcome(ctx), !Catch::Contains("memory plan grown"));
      uint64_t nowBlock = 0;
      REQUIRE(hj_graph_plan_size(ctx, &count, &nowBlock, &zeroedAt) == HJ_OK);
      CHECK(nowBlock == block);
    }
    hj_stats s = rt->stats();
    CHECK(s.graph_replans == 0);
    CHECK(s.graph_fallbacks == 0);
    CHECK(s.graph_bytes == 2 * 16384);
  }
}

TEST_CASE("graph mode on the GPU: bounds_checked kernels launch rounded grids, new shapes set arguments only",
          "[cuda][graph]") {
  // Extents 1 to 6000 (1 to 24 blocks) in a scattered order, twice, then
  // a growing run: every output is the formula's though the nodes launch
  // grids rounded up to 1, 2, 4, 8, 16 or 32 blocks (memcheck sees the
  // extra blocks touch nothing), and no node is given a new grid: a new
  // signature is bound to the graph holding its rounded grid. That is the
  // host-update policy (HOSTJIT_GRAPH_DEVICE_UPDATES=0): with device
  // updates a new grid costs next to nothing and the graphs are shared.
  setenv("HOSTJIT_GRAPH_DEVICE_UPDATES", "0", 1);
  struct Unset {
    ~Unset() { unsetenv("HOSTJIT_GRAPH_DEVICE_UPDATES"); }
  } unset;
  Program p = shapesProgram(/*boundsChecked=*/true);
  std::vector<int64_t> extents;
  for (int round = 0; round < 2; ++round)
    for (int i = 0; i < 40; ++i) extents.push_back(1 + (int64_t(i) * 4111) % 6000);
  for (int64_t n = 5000; n <= 6000; n += 50) extents.push_back(n);
  for (bool useJit : {false, true}) {
    INFO((useJit ? "jit" : "eval"));
    auto rt = everyCallRuntime();
    Runner graph(p, rt, useJit, /*graph=*/true);
    for (int64_t n : extents) callShape(graph, rt, n);
    hj_stats s = rt->stats();
    WARN("graph_builds " << s.graph_builds << ", graph_reuses " << s.graph_reuses << ", graph_updates "
                         << s.graph_updates);
    CHECK(s.graph_grid_updates == 0);
    // A graph per rounded grid (6), and one for each of the 40 signatures
    // that come back; a driver that refused a memset's new size would build more.
    CHECK(s.graph_builds <= 46);
    CHECK(s.graph_fallbacks == 0);
    CHECK(s.graph_replays == extents.size());
  }
}

TEST_CASE("graph mode on the GPU: device updates, with host updates and new blocks among them, equal the formula",
          "[cuda][graph]") {
  // One graph for every signature (HOSTJIT_GRAPHS_PER_SHAPE=1) built for
  // device updates (HOSTJIT_GRAPH_DEVICE_UPDATES=1): each call's changed
  // kernel nodes take their arguments and grids from the graph's updater.
  // %s changes only the last node's arguments; %bs the middle node's block,
  // which the host sets (the graph is uploaded again, and every node the
  // device had updated is posted again); with HOSTJIT_FILL_NAN the memset
  // nodes change size by the host's updates between device updates.
  // y = s * (3 * x) on every call.
  std::string vec = sourceDir() + "/examples/kernels/vector.cu";
  Program p = parseText("kernel @scale_vec(ptr<f32>, ptr<f32>, i64, f32) {\n  cuda = \"" + vec +
                        "\"\n  entry = \"scale_vec\"\n}\n\nkernel @add_vec(ptr<f32>, ptr<f32>, ptr<f32>, i64) {\n  cuda = \"" +
                        vec + "\"\n  entry = \"add_vec\"\n}\n\n"
                        "func @main(%x: f32[?], %bs: i64, %s: f32) -> (f32[?]) {\n  %n = size %x, 0\n"
                        "  %blocks = ceildiv %n, 256\n  %b2 = ceildiv %n, %bs\n"
                        "  %a = alloc f32[%n] zero_init\n  %t = alloc f32[%n]\n  %y = alloc f32[%n]\n"
                        "  launch @scale_vec grid(%blocks, 1, 1) block(256, 1, 1) smem(0) (%x, %t, %n, 3.0)\n"
                        "  launch @add_vec grid(%b2, 1, 1) block(%bs, 1, 1) smem(0) (%t, %a, %a, %n)\n"
                        "  launch @scale_vec grid(%blocks, 1, 1) block(256, 1, 1) smem(0) (%a, %y, %n, %s)\n"
                        "  free %t\n  free %a\n  return %y\n}\n");
  const int64_t extents[] = {1000, 3000, 77, 4096, 1000};
  const int64_t blocks[] = {256, 128, 64};
  const float scales[] = {0.5f, 2.0f, 0.25f};
  for (int32_t fillNan : {0, 1}) {
    for (bool useJit : {false, true}) {
      INFO((useJit ? "jit" : "eval") << (fillNan ? ", NaN fills" : ""));
      setenv("HOSTJIT_GRAPH_DEVICE_UPDATES", "1", 1);
      setenv("HOSTJIT_GRAPHS_PER_SHAPE", "1", 1);
      auto rt = everyCallRuntime(fillNan);
      unsetenv("HOSTJIT_GRAPH_DEVICE_UPDATES");
      unsetenv("HOSTJIT_GRAPHS_PER_SHAPE");
      Runner graph(p, rt, useJit, /*graph=*/true);
      int calls = 0;
      for (int i = 0; i < 90; ++i) {
        // The extent every 2nd call, the scale every 3rd, the block every 7th.
        int64_t n = extents[(i / 2) % 5], bs = blocks[(i / 7) % 3];
        float s = scales[(i / 3) % 3];
        INFO("call " << i << ": n = " << n << ", bs = " << bs << ", s = " << s);
        std::vector<float> xv = shapeInput(n);
        auto x = Tensor::fromHost(rt, {n}, xv);
        REQUIRE(x);
        DLTensor xd = x->dl();
        const DLTensor *in[] = {&xd};
        ScalarArg sc[] = {ScalarArg::i64(bs), ScalarArg::f32(s)};
        auto out = graph.run(in, sc);
        INFO((out ? "" : out.error().message));
        REQUIRE(out);
        std::vector<float> want(xv.size());
        for (size_t k = 0; k < xv.size(); ++k) want[k] = s * (3.0f * xv[k] + 0.0f);
        CHECK(hostFloats((*out)[0]) == want);
        ++calls;
      }
      hj_stats st = rt->stats();
      WARN("graph_builds " << st.graph_builds << ", graph_updates " << st.graph_updates << ", graph_device_updates "
                           << st.graph_device_updates << ", graph_grid_updates " << st.graph_grid_updates);
      CHECK(st.graph_replays == static_cast<uint64_t>(calls));
      CHECK(st.graph_fallbacks == 0);
      CHECK(st.graph_device_updates > 60);
      CHECK(st.graph_updates > st.graph_device_updates);  // the new blocks' (and fills') host updates
    }
  }
}

TEST_CASE("graph mode on the GPU: a graph whose device falls behind argument updates goes back to host updates",
          "[cuda][graph]") {
  // Each call a new signature (%n), the first 60 holding the device 10 ms
  // (@hold; far longer than a call takes the host, under a sanitizer too),
  // and no wait between calls: under auto the graph is built for device
  // updates after 4 launches. Where the nodes get new arguments only (the
  // fill's grid stays 16 blocks), the graph is built again for host updates,
  // for good, once the device is 16 launches behind; where every call
  // gives the fill a new grid, it keeps taking its updates at launch. Every
  // output is the fill's.
  std::string cu = sourceDir() + "/test/gpu/programs/watchdog.cu";
  Program p = parseText("kernel @hold(ptr<f32>, i64) {\n  cuda = \"" + cu + "\"\n  entry = \"hold\"\n}\n\n"
                        "kernel @fill_rank(ptr<f32>, i64, i64) {\n  cuda = \"" + cu + "\"\n  entry = \"fill_rank\"\n}\n\n"
                        "func @main(%n: i64, %hold_ns: i64) -> (f32[?]) {\n  %a = alloc f32[%n]\n"
                        "  launch @hold grid(1, 1, 1) block(32, 1, 1) smem(0) (%a, %hold_ns)\n"
                        "  %blocks = ceildiv %n, 256\n"
                        "  launch @fill_rank grid(%blocks, 1, 1) block(256, 1, 1) smem(0) (%a, %n, 0)\n"
                        "  return %a\n}\n");
  for (bool newGrids : {false, true}) {
    for (bool useJit : {false, true}) {
      INFO((useJit ? "jit" : "eval") << (newGrids ? ", a new grid every call" : ", arguments only"));
      setenv("HOSTJIT_GRAPH_DEVICE_UPDATES", "auto", 1);
      auto rt = everyCallRuntime();
      unsetenv("HOSTJIT_GRAPH_DEVICE_UPDATES");
      Runner graph(p, rt, useJit, /*graph=*/true);
      std::vector<std::vector<Tensor>> outs;
      std::vector<int64_t> sizes;
      int toHost = 0, backAt = -1;
      uint64_t deviceAtBack = 0;
      for (int i = 0; i < 100; ++i) {
        int64_t n = newGrids ? 1000 + 300 * i : 3841 + i;
        ScalarArg sc[] = {ScalarArg::i64(n), ScalarArg::i64(i < 60 ? 10000000 : 0)};
        auto out = graph.run({}, sc);
        INFO("call " << i << (out ? "" : ": " + out.error().message));
        REQUIRE(out);
        outs.push_back(std::move(*out));
        sizes.push_back(n);
        std::string way = hj_graph_outcome(rt->context());
        if (way.find("from the host (the device fell behind its updates)") != std::string::npos) {
          ++toHost;
          backAt = i;
          deviceAtBack = rt->stats().graph_device_updates;
        }
      }
      hj_stats s = rt->stats();
      INFO("back to host updates at call " << backAt);
      if (newGrids) {
        CHECK(toHost == 0);
        CHECK(s.graph_device_updates > 90);
      } else {
        CHECK(toHost == 1);
        CHECK(backAt > 16);
        CHECK(deviceAtBack > 0);
        CHECK(s.graph_device_updates == deviceAtBack);  // none after it
      }
      CHECK(s.graph_fallbacks == 0);
      for (size_t c = 0; c < outs.size(); ++c) {
        std::vector<float> got = hostFloats(outs[c][0]);
        REQUIRE(got.size() == static_cast<size_t>(sizes[c]));
        bool ok = true;
        for (size_t k = 0; k < got.size() && ok; ++k) ok = got[k] == float(k + 1);
        INFO("output of call " << c);
        CHECK(ok);
      }
    }
  }
}
