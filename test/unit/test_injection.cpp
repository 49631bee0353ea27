// test_injection.cpp - a failure injected at every fallible runtime
// operation of a call, in turn, on every program and example fusion through
// the evaluator, the JIT and KernelExecutor: the call returns the injected
// error naming the operation, everything it allocated is released, the
// zeroed arena is all zero, and the next call succeeds with the same outputs.
#include "common/fusion_cases.h"
#include "common/inject.h"
#include "helpers.h"
#include "hostjit/exec/parity.h"

using namespace hostjit;
using namespace hostjit::test;


TEST_CASE("injected failures: every operation of every program, evaluator and JIT", "[inject]") {
  size_t programs = 0;
  for (const std::string &file : allHirFiles()) {
    std::string text = readFile(file);
    auto args = parityArgs(text);
    if (args.empty()) continue;
    Program p = parseOk(text, file);
    auto plan = makePlan(p);
    REQUIRE(plan);
    for (bool jit : {false, true}) {
      auto rt = makeRuntime();
      auto in = InputSet::random(rt, *plan, args[0].shapes, 7);
      REQUIRE(in);
      auto scalars = scalarArgs(*plan, args[0].scalars);
      Runner runner(p, rt, jit);
      injectEverywhere(*rt, [&] { return runner.run(in->span(), scalars); }, file + (jit ? " (jit)" : " (eval)"));
    }
    ++programs;
  }
  CHECK(programs >= 8);
}

TEST_CASE("injected failures: every operation of every example fusion, through all four paths", "[inject]") {
  for (const std::string &name : exampleFusions()) {
    Fusion f = loadExampleFusion(HOSTJIT_SOURCE_DIR, name);
    FusionCase c = fusionCases(name)[0];
    for (Path path : kPaths) {
      PathRunner r(f, path, makeRuntime(), sharedJit());
      FusionInputs in(f, c, r.rt(), 13);
      injectEverywhere(*r.rt(), [&] { return r.run(*in.set, in.scalars); }, name + " on " + pathName(path));
    }
  }
}

TEST_CASE("injected failures: loading a kernel table fails cleanly", "[inject]") {
  Program p = parseOk(readFile(std::string(HOSTJIT_SOURCE_DIR) + "/examples/pipeline.hir"), "pipeline.hir");
  auto rt = makeRuntime();
  for (uint64_t n = 1; n <= 3; ++n) {
    hj_inject_failure(rt->context(), n);
    auto ev = Evaluator::create(p, rt);
    REQUIRE(!ev);
    CHECK(ev.error().status == HJ_ERR_INJECTED);
    CHECK_THAT(ev.error().message, Catch::EndsWith(std::string("loading kernel @") +
                                                   (n == 1 ? "scale_shift" : n == 2 ? "row_sum" : "center")));
  }
  hj_inject_failure(rt->context(), 0);
  CHECK(Evaluator::create(p, rt));
}

TEST_CASE("injected failures: HOSTJIT_FAIL_AT counts from the context's creation", "[inject]") {
  ::setenv("HOSTJIT_FAIL_AT", "2", 1);
  hj_options o = testOptions();  // fail_at -1: from the environment
  auto rt = Runtime::create(o);
  ::unsetenv("HOSTJIT_FAIL_AT");
  REQUIRE(rt);
  int64_t n = 4;
  void *a = nullptr, *b = nullptr;
  // Operation 1 is hj_alloc itself, 2 the backend allocation under it.
  CHECK(hj_alloc((*rt)->context(), &n, nullptr, 1, HJ_DTYPE_f32, 0, "a", &a) == HJ_ERR_INJECTED);
  CHECK(std::string(hj_last_error()) == "injected failure of operation 2: backend allocation of 512 bytes");
  CHECK((*rt)->stats().live_bytes == 0);
  REQUIRE(hj_alloc((*rt)->context(), &n, nullptr, 1, HJ_DTYPE_f32, 0, "b", &b) == HJ_OK);
  CHECK(hj_free((*rt)->context(), b) == HJ_OK);
  (void)a;
}
