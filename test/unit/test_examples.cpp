// test_examples.cpp - the examples against their reference computations,
// through the evaluator and the JIT, at several shapes.
#include "helpers.h"
#include "reference.h"

using namespace hostjit;
using namespace hostjit::test;

TEST_CASE("examples match their references in eval and jit", "[examples]") {
  std::string dir = std::string(HOSTJIT_SOURCE_DIR) + "/examples";
  for (const char *name : {"grid_sum", "splitk", "pipeline"}) {
    for (const examples::ExampleCase &c : examples::exampleCases(dir, name)) {
      Diagnostics d;
      Program p = parseFile(c.file, d);
      REQUIRE(d.empty());
      auto rt = makeRuntime();
      auto ev = Evaluator::create(p, rt);
      REQUIRE(ev);
      auto cp = sharedJit().compile(p, rt, noCache());
      REQUIRE(cp);
      auto inputs = InputSet::random(rt, ev->plan(), c.shapes, 11);
      REQUIRE(inputs);
      for (int call = 0; call < 3; ++call) {  // later calls reuse pooled and arena memory
        auto a = ev->run(inputs->span(), c.scalars);
        auto b = (*cp)->run(inputs->span(), c.scalars);
        REQUIRE(a);
        REQUIRE(b);
        INFO(name << " call " << call);
        CHECK(examples::checkExample(c, *inputs, *a) == "");
        CHECK(examples::checkExample(c, *inputs, *b) == "");
      }
      CHECK(rt->stats().live_bytes == 0);
    }
  }
}

TEST_CASE("outputs convert to DLManagedTensor and free through its deleter", "[examples]") {
  std::string file = std::string(HOSTJIT_SOURCE_DIR) + "/examples/grid_sum.hir";
  Diagnostics d;
  Program p = parseFile(file, d);
  auto rt = makeRuntime();
  auto ev = Evaluator::create(p, rt);
  REQUIRE(ev);
  auto inputs = InputSet::random(rt, ev->plan(), {{"x", {4, 4}}}, 3);
  REQUIRE(inputs);
  auto out = ev->run(inputs->span());
  REQUIRE(out);
  DLManagedTensor *m = (*out)[0].release();
  CHECK(m->dl_tensor.ndim == 1);
  CHECK(m->dl_tensor.shape[0] == 1);
  CHECK(rt->stats().live_bytes == 4);
  out->clear();
  CHECK(rt->stats().live_bytes == 4);  // still owned by the managed tensor
  m->deleter(m);
  CHECK(rt->stats().live_bytes == 0);
}

TEST_CASE("arguments are checked and errors name the argument", "[examples]") {
  std::string file = std::string(HOSTJIT_SOURCE_DIR) + "/examples/splitk.hir";
  Diagnostics d;
  Program p = parseFile(file, d);
  auto rt = makeRuntime();
  auto ev = Evaluator::create(p, rt);
  REQUIRE(ev);
  auto cp = sharedJit().compile(p, rt, noCache());
  REQUIRE(cp);
  auto inputs = InputSet::random(rt, ev->plan(), {{"a", {4, 8}}, {"b", {8, 2}}}, 3);
  REQUIRE(inputs);
  std::vector<ScalarArg> wrongType{ScalarArg::f32(2)};
  auto r1 = ev->run(inputs->span(), wrongType);
  REQUIRE(!r1);
  CHECK(r1.error().message == "argument %splits: expected a i64 scalar, got f32");
  DLTensor bad = *inputs->pointers()[1];
  bad.ndim = 1;
  const DLTensor *args[] = {inputs->pointers()[0], &bad};
  std::vector<ScalarArg> ok{ScalarArg::i64(2)};
  auto r2 = (*cp)->run(args, ok);
  REQUIRE(!r2);
  CHECK(r2.error().message == "argument %b: expected rank 2 (f32[?, ?]), got rank 1");
  bad = *inputs->pointers()[1];
  bad.dtype.bits = 64;
  auto r3 = ev->run(args, ok);
  REQUIRE(!r3);
  CHECK(r3.error().message.find("argument %b: expected dtype f32") == 0);
  bad = *inputs->pointers()[1];
  bad.device.device_type = kDLCUDA;
  auto r4 = ev->run(args, ok);
  REQUIRE(!r4);
  CHECK(r4.error().message.find("argument %b: is on device type 2") == 0);
  CHECK(rt->stats().allocs == 0);
}
