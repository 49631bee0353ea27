// test_custom_call.cpp - custom calls on the host backend: the example
// library's axpy against a reference computed here (evaluator and JIT,
// identical records), every argument kind as the function receives it,
// errors the function reports, symbols that cannot be found, graph mode
// capturing a capturable call and running a program eagerly, with the
// reason, when a call is not capturable; injected failures.
#include <random>

#include "common/inject.h"
#include "helpers.h"

using namespace hostjit;
using namespace hostjit::test;

namespace {

std::string exampleProgram() { return readFile(std::string(HOSTJIT_SOURCE_DIR) + "/examples/custom_call.hir"); }

// examples/custom_call.hir computed here: out = 2y, out += 0.5x, then
// out[2i] += -1 * x[i] for i < ceil(n / 2).
std::vector<float> reference(const std::vector<float> &x, const std::vector<float> &y) {
  size_t n = x.size();
  std::vector<float> out(n);
  for (size_t i = 0; i < n; ++i) out[i] = 2.0f * y[i];
  for (size_t i = 0; i < n; ++i) out[i] = 0.5f * x[i] + out[i];
  for (size_t i = 0; i < (n + 1) / 2; ++i) out[2 * i] = -1.0f * x[i] + out[2 * i];
  return out;
}

std::vector<float> randomFloats(size_t n, unsigned seed) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<float> u(0.25f, 2.0f);
  std::vector<float> v(n);
  for (float &f : v) f = u(g) * (g() % 2 ? 1.0f : -1.0f);
  return v;
}

Tensor vec(const std::shared_ptr<Runtime> &rt, const std::vector<float> &v) {
  auto t = Tensor::fromHost(rt, {static_cast<int64_t>(v.size())}, v);
  REQUIRE(t);
  return std::move(*t);
}

// Runs examples/custom_call.hir on x and y and checks its output against
// the reference.
void checkExample(Runner &r, const std::shared_ptr<Runtime> &rt, const std::vector<float> &xv,
                  const std::vector<float> &yv) {
  Tensor x = vec(rt, xv), y = vec(rt, yv);
  DLTensor xd = x.dl(), yd = y.dl();
  const DLTensor *inputs[] = {&xd, &yd};
  auto out = r.run(inputs);
  INFO((out ? "" : out.error().message));
  REQUIRE(out);
  CHECK(floats((*out)[0]) == reference(xv, yv));
}

// What the probe function below received in its last call.
struct Seen {
  int calls = 0;
  std::string name, site;
  int32_t backend = -1;
  void *stream = reinterpret_cast<void *>(1);
  std::vector<hj_custom_arg> args;
  std::vector<std::vector<int64_t>> sizes, strides;
};
Seen seen;

int32_t probe(const hj_custom_call_args *c, char *, uint64_t) {
  ++seen.calls;
  seen.name = c->name;
  seen.site = c->site;
  seen.backend = c->backend;
  seen.stream = c->stream;
  seen.args.assign(c->args, c->args + c->num_args);
  seen.sizes.clear();
  seen.strides.clear();
  for (uint32_t i = 0; i < c->num_args; ++i) {
    const hj_custom_arg &a = c->args[i];
    seen.sizes.emplace_back(a.sizes, a.sizes + a.rank);
    seen.strides.emplace_back(a.strides, a.strides + a.rank);
  }
  return 0;
}

int32_t failing(const hj_custom_call_args *c, char *error, uint64_t cap) {
  std::snprintf(error, cap, "%s refused: the tensor is too short", c->name);
  return 3;
}

}  // namespace

TEST_CASE("custom call: the example's axpy matches the reference on the evaluator and the JIT", "[custom]") {
  Program p = parseOk(exampleProgram(), std::string(HOSTJIT_SOURCE_DIR) + "/examples/custom_call.hir");
  for (size_t n : {size_t(1), size_t(6), size_t(7), size_t(1000)}) {
    std::vector<float> xv = randomFloats(n, 11 + n), yv = randomFloats(n, 29 + n);
    std::vector<float> want = reference(xv, yv);
    auto rt = makeRuntime();
    Tensor x = vec(rt, xv), y = vec(rt, yv);
    DLTensor xd = x.dl(), yd = y.dl();
    const DLTensor *inputs[] = {&xd, &yd};
    std::vector<std::string> first;
    for (bool jit : {false, true}) {
      INFO((jit ? "jit" : "eval") << ", n = " << n);
      hj_reset_stats(rt->context());
      Runner r(p, rt, jit);
      hj_record_enable(rt->context(), 1);
      auto out = r.run(inputs);
      INFO((out ? "" : out.error().message));
      REQUIRE(out);
      CHECK(floats((*out)[0]) == want);
      CHECK(rt->stats().library_calls == 2);
      CHECK(rt->stats().launches == 1);
      auto record = rt->recordLines();
      REQUIRE(record.size() == 4);
      char xs[32];
      std::snprintf(xs, sizeof xs, "ptr 0x%llx", (unsigned long long)reinterpret_cast<uintptr_t>(xd.data));
      CHECK(record[2] == "call @axpy (" + std::string(xs) + " sizes[" + std::to_string(n) +
                             "] strides[1], #1 sizes[" + std::to_string(n) + "] strides[1], f32 0.5 [0x3f000000])");
      CHECK_THAT(record[3], Catch::Contains("#1 sizes[" + std::to_string((n + 1) / 2) + "] strides[2], f32 -1"));
      if (first.empty()) {
        first = record;
      } else {
        auto diff = compareRecords(first, record, "evaluator", "jit");
        INFO((diff ? *diff : ""));
        CHECK(!diff);
      }
    }
  }
}

TEST_CASE("custom call: the function gets every argument kind as declared", "[custom]") {
  const char *text = R"(custom @probe(tensor<f32, 2>, ptr<i32>, i64, i32, f32, f64, bool, tensor<f16, 0>) {
  symbol = "probe_fn"
}

func @main(%x: f32[?, ?], %k: i32[4], %h: f16[], %n: i64, %s: f32) -> () {
  %t = view %x[3, 2] strides[1, 3]
  %st = stream
  on %st {
    call @probe(%t, %k, %n, -7, %s, 2.5, 1, %h)
  }
  return
}
)";
  Program p = parseOk(text, "probe.hir");
  for (bool jit : {false, true}) {
    INFO((jit ? "jit" : "eval"));
    auto rt = makeRuntime();
    REQUIRE(hj_register_custom_call(rt->context(), "probe_fn", &probe) == HJ_OK);
    auto x = Tensor::fromHost(rt, {2, 3}, randomFloats(6, 3));
    REQUIRE(x);
    auto k = Tensor::fromHost(rt, DType::i32, {4}, std::vector<int32_t>{1, 2, 3, 4}.data(), 16);
    REQUIRE(k);
    uint16_t half = 0x3c00;
    auto h = Tensor::fromHost(rt, DType::f16, {}, &half, 2);
    REQUIRE(h);
    DLTensor xd = x->dl(), kd = k->dl(), hd = h->dl();
    const DLTensor *inputs[] = {&xd, &kd, &hd};
    ScalarArg scalars[] = {ScalarArg::i64(1234567890123), ScalarArg::f32(-0.75f)};
    seen = Seen{};
    Runner r(p, rt, jit);
    auto out = r.run(inputs, scalars);
    INFO((out ? "" : out.error().message));
    REQUIRE(out);
    REQUIRE(seen.calls == 1);
    CHECK(seen.name == "probe");
    CHECK_THAT(seen.site, Catch::StartsWith("call 1 of @main at probe.hir:9:5 (on stream 1)"));
    CHECK(seen.backend == HJ_BACKEND_HOST);
    CHECK(seen.stream == nullptr);
    REQUIRE(seen.args.size() == 8);
    const auto &a = seen.args;
    CHECK(a[0].kind == HJ_PARAM_TENSOR);
    CHECK(a[0].dtype == HJ_DTYPE_f32);
    CHECK(a[0].rank == 2);
    CHECK(a[0].data == xd.data);
    CHECK(seen.sizes[0] == std::vector<int64_t>{3, 2});
    CHECK(seen.strides[0] == std::vector<int64_t>{1, 3});
    CHECK(a[1].kind == HJ_PARAM_PTR);
    CHECK(a[1].dtype == HJ_DTYPE_i32);
    CHECK(a[1].data == kd.data);
    CHECK(a[1].rank == 0);
    CHECK(a[2].kind == HJ_PARAM_I64);
    CHECK(a[2].value.i64 == 1234567890123);
    CHECK(a[3].kind == HJ_PARAM_I32);
    CHECK(a[3].value.i32 == -7);
    CHECK(a[4].kind == HJ_PARAM_F32);
    CHECK(a[4].value.f32 == -0.75f);
    CHECK(a[5].kind == HJ_PARAM_F64);
    CHECK(a[5].value.f64 == 2.5);
    CHECK(a[6].kind == HJ_PARAM_BOOL);
    CHECK(a[6].value.b == 1);
    CHECK(a[7].kind == HJ_PARAM_TENSOR);
    CHECK(a[7].dtype == HJ_DTYPE_f16);
    CHECK(a[7].rank == 0);
    CHECK(a[7].data == hd.data);
  }
}

TEST_CASE("custom call: a function that fails fails the call, naming it and its statement", "[custom]") {
  const char *text = R"(custom @refuse(tensor<f32, 1>) {
  symbol = "refuse_fn"
}

func @main(%x: f32[?]) -> (f32[?]) {
  %n = size %x, 0
  %y = alloc f32[%n]
  call @refuse(%y)
  return %y
}
)";
  Program p = parseOk(text, "refuse.hir");
  for (bool jit : {false, true}) {
    INFO((jit ? "jit" : "eval"));
    auto rt = makeRuntime();
    REQUIRE(hj_register_custom_call(rt->context(), "refuse_fn", &failing) == HJ_OK);
    Tensor x = vec(rt, randomFloats(5, 1));
    DLTensor xd = x.dl();
    const DLTensor *inputs[] = {&xd};
    Runner r(p, rt, jit);
    auto out = r.run(inputs);
    REQUIRE(!out);
    CHECK(out.error().status == HJ_ERR_BACKEND);
    CHECK(out.error().message ==
          "custom call @refuse (call 1 of @main at refuse.hir:8:3) failed (it returned 3): refuse refused: the tensor "
          "is too short");
    CHECK(rt->stats().live_bytes == 0);  // %y freed on the error path
  }
}

TEST_CASE("custom call: a symbol that cannot be found is an error when the program is loaded", "[custom]") {
  auto load = [](const std::string &attrs) {
    std::string text = "custom @c(tensor<f32, 1>) {\n" + attrs +
                       "}\n\nfunc @main(%x: f32[?]) -> () {\n  call @c(%x)\n  return\n}\n";
    Program p = parseOk(text, "sym.hir");
    auto rt = Runtime::create(testOptions());
    REQUIRE(rt);
    auto e = Evaluator::create(p, *rt);
    REQUIRE(!e);
    CHECK(e.error().status == HJ_ERR_NOT_FOUND);
    return e.error().message;
  };
  CHECK(load("  symbol = \"not_there\"\n") ==
        "custom call @c: 'not_there' is not registered (hj_register_custom_call) nor exported by a loaded custom call "
        "library (hj_load_custom_library, --custom-calls), and the declaration names no library");
  CHECK(load("  symbol = \"not_there\"\n  library = \"" + std::string(HOSTJIT_CUSTOM_CALLS) + "\"\n") ==
        "custom call @c: symbol 'not_there' not found in '" + std::string(HOSTJIT_CUSTOM_CALLS) + "'");
  CHECK_THAT(load("  symbol = \"hj_example_axpy\"\n  library = \"/nonexistent/libnone.so\"\n"),
             Catch::StartsWith("custom call @c: cannot load library '/nonexistent/libnone.so': "));
  // Found in the declaration's library without loading it first.
  std::string text = "custom @c(tensor<f32, 1>, tensor<f32, 1>, f32) {\n  symbol = \"hj_example_axpy\"\n  library = \"" +
                     std::string(HOSTJIT_CUSTOM_CALLS) + "\"\n}\n\nfunc @main(%x: f32[?]) -> () {\n" +
                     "  call @c(%x, %x, 1.0)\n  return\n}\n";
  auto rt = Runtime::create(testOptions());
  REQUIRE(rt);
  auto e = Evaluator::create(parseOk(text, "lib.hir"), *rt);
  INFO((e ? "" : e.error().message));
  REQUIRE(e);
  std::vector<float> xv = randomFloats(9, 4), want(9);
  for (size_t i = 0; i < 9; ++i) want[i] = 1.0f * xv[i] + xv[i];
  Tensor x = vec(*rt, xv);
  DLTensor xd = x.dl();
  const DLTensor *inputs[] = {&xd};
  REQUIRE(e->run(inputs));
  CHECK(floats(x) == want);
}

TEST_CASE("custom call: graph mode captures a capturable call and replays it", "[custom][graph]") {
  Program p = parseOk(exampleProgram(), std::string(HOSTJIT_SOURCE_DIR) + "/examples/custom_call.hir");
  for (bool jit : {false, true}) {
    INFO((jit ? "jit" : "eval"));
    auto rt = makeRuntime();
    Runner r(p, rt, jit, OptLevel::O2, /*graph=*/true);
    for (size_t n : {size_t(8), size_t(8), size_t(8), size_t(13), size_t(8)}) {
      std::vector<float> xv = randomFloats(n, unsigned(n) * 3), yv = randomFloats(n, unsigned(n) * 5 + 1);
      checkExample(r, rt, xv, yv);
    }
    hj_stats s = rt->stats();
    // n = 8, n = 13 (bound to 8's graph: the same dims), and 8 again (its
    // graph holds 13's values: it gets its own).
    CHECK(s.graph_builds + s.graph_reuses == 3);
    CHECK(s.graph_fallbacks == 0);
    CHECK(s.graph_replays == 5);
    CHECK(s.graph_fast == 3);
    CHECK(s.library_calls == 10);
    CHECK(std::string(hj_graph_reason(rt->context())).empty());
  }
}

TEST_CASE("custom call: graph mode runs a program with a call it may not capture eagerly, saying why", "[custom][graph]") {
  std::string text = exampleProgram();
  text.replace(text.find("  capturable = true"), std::string("  capturable = true").size(), "");
  Program p = parseOk(text, std::string(HOSTJIT_SOURCE_DIR) + "/examples/custom_call.hir");
  for (bool jit : {false, true}) {
    INFO((jit ? "jit" : "eval"));
    auto rt = makeRuntime();
    Runner r(p, rt, jit, OptLevel::O2, /*graph=*/true);
    for (int call = 0; call < 3; ++call) {
      std::vector<float> xv = randomFloats(10, 7), yv = randomFloats(10, 8);
      checkExample(r, rt, xv, yv);
    }
    hj_stats s = rt->stats();
    CHECK(s.graph_builds == 0);
    CHECK(s.graph_fallbacks == 3);
    CHECK(s.library_calls == 6);
    CHECK(s.launches == 3);
    CHECK_THAT(std::string(hj_graph_reason(rt->context())),
               Catch::Matches("custom call @axpy \\(call 1 of @main at .*custom_call.hir:26:3\\) may not be captured "
                              "into a graph \\(its declaration does not say `capturable = true`\\)"));
  }
}

TEST_CASE("custom call: each fallible operation of the example failing frees what the call holds", "[custom]") {
  Program p = parseOk(exampleProgram(), std::string(HOSTJIT_SOURCE_DIR) + "/examples/custom_call.hir");
  for (bool jit : {false, true}) {
    auto rt = makeRuntime();
    Tensor x = vec(rt, randomFloats(20, 1)), y = vec(rt, randomFloats(20, 2));
    DLTensor xd = x.dl(), yd = y.dl();
    const DLTensor *inputs[] = {&xd, &yd};
    Runner r(p, rt, jit);
    uint64_t ops = injectEverywhere(*rt, [&] { return r.run(inputs); }, jit ? "jit" : "eval");
    CHECK(ops == 5);  // hj_alloc, the pool's allocation, the launch, two calls
  }
}

TEST_CASE("custom call: a built declaration with kernel attributes is refused", "[custom]") {
  ProgramBuilder b;
  Kernel k;
  k.name = "c";
  k.custom = true;
  k.symbol = "c_fn";
  k.host = "c_host";
  k.params = {ParamType{true, DType::f32}};
  KernelId id = b.kernel(k);
  ValueId x = b.tensorInput("x", DType::f32, {kDynamic});
  b.call(id, {Operand::of(x)});
  b.ret({});
  Program p = b.finish();
  Diagnostics d = verify(p);
  REQUIRE(d.list().size() == 1);
  CHECK(d.list()[0].message == "custom call @c has kernel attributes; a custom call takes symbol, library and capturable");
}

TEST_CASE("custom call: with the context synchronising after every call, results are the same", "[custom]") {
  Program p = parseOk(exampleProgram(), std::string(HOSTJIT_SOURCE_DIR) + "/examples/custom_call.hir");
  hj_options o = testOptions();
  o.sync = 1;
  auto rt = makeRuntime(o);
  for (bool jit : {false, true}) {
    INFO((jit ? "jit" : "eval"));
    Runner r(p, rt, jit);
    checkExample(r, rt, randomFloats(33, 9), randomFloats(33, 10));
  }
}
