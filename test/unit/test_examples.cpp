// test_examples.cpp - the examples against their reference computations,
// through the evaluator and the JIT, at several shapes.
#include "helpers.h"
#include "reference.h"

using namespace hostjit;
using namespace hostjit::test;

TEST_CASE("examples match their references in eval and jit", "[examples]") {
  std::string dir = std::string(HOSTJIT_SOURCE_DIR) + "/examples";
  for (const std::string &name : examples::exampleNames()) {
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
  // The wrong number of arguments, a NULL tensor, NULL data with elements,
  // sizes whose product overflows, a negative stride: in both paths and in
  // graph mode, before any runtime call.
  ev->setGraphMode(true);
  (*cp)->setGraphMode(true);
  for (bool jit : {false, true}) {
    auto run = [&](std::span<const DLTensor *const> in, std::span<const ScalarArg> s) {
      return jit ? (*cp)->run(in, s) : ev->run(in, s);
    };
    auto message = [&](std::span<const DLTensor *const> in, std::span<const ScalarArg> s) {
      auto r = run(in, s);
      REQUIRE(!r);
      CHECK(r.error().status == HJ_ERR_INVALID_ARGUMENT);
      return r.error().message;
    };
    const DLTensor *one[] = {inputs->pointers()[0]};
    CHECK(message(one, ok) == "@main takes 2 tensor arguments, got 1");
    CHECK(message(inputs->span(), {}) == "@main takes 1 scalar arguments, got 0");
    const DLTensor *none[] = {inputs->pointers()[0], nullptr};
    CHECK(message(none, ok) == "argument %b: no tensor given, expected f32[?, ?]");
    bad = *inputs->pointers()[1];
    bad.data = nullptr;
    CHECK(message(args, ok) == "argument %b: data pointer is NULL");
    bad = *inputs->pointers()[1];
    int64_t huge[2] = {int64_t{1} << 40, int64_t{1} << 30};
    bad.shape = huge;
    bad.strides = nullptr;
    CHECK(message(args, ok) == "argument %b: shape [1099511627776, 1073741824] holds more than 2^62 bytes: its sizes "
                               "overflow");
    bad = *inputs->pointers()[1];
    int64_t negStrides[2] = {-2, 1};
    bad.strides = negStrides;
    CHECK(message(args, ok) == "argument %b: stride 0 is -2, expected >= 0");
    // A zero dim does not excuse the others: their strides must fit.
    int64_t zeroHuge[2] = {0, int64_t{1} << 61};
    bad = *inputs->pointers()[1];
    bad.shape = zeroHuge;
    CHECK(message(args, ok) == "argument %b: shape [0, 2305843009213693952] holds more than 2^62 bytes: its sizes "
                               "overflow");
    // A ptr<f32> parameter sees the data pointer alone: strided or
    // broadcast memory would be read as if it were contiguous.
    const std::string ptrWhy =
        "argument %b: kernel @splitk_matmul takes it as ptr<f32> (parameter 1), which is its data pointer alone, so "
        "it must be contiguous; ";
    const std::string ptrFix = ": pass a contiguous copy, or declare the parameter tensor<f32, 2> to take the strides";
    int64_t rowStrided[2] = {4, 1}, broadcast[2] = {0, 1}, colStrided[2] = {4, 2};
    bad = *inputs->pointers()[1];
    bad.strides = rowStrided;
    CHECK(message(args, ok) == ptrWhy + "its stride 0 is 4, expected 2" + ptrFix);
    bad.strides = broadcast;
    CHECK(message(args, ok) == ptrWhy + "its stride 0 is 0, expected 2" + ptrFix);
    bad.strides = colStrided;
    CHECK(message(args, ok) == ptrWhy + "its stride 1 is 2, expected 1" + ptrFix);
    // An element that does not start at a multiple of its size.
    bad = *inputs->pointers()[1];
    bad.byte_offset = 2;
    std::string misaligned = message(args, ok);
    CHECK(misaligned.rfind("argument %b: its first element is at address ", 0) == 0);
    CHECK(misaligned.find(", which is not a multiple of 4 (a f32's size): pass an aligned copy") != std::string::npos);
  }
  CHECK(rt->stats().allocs == 0);
  CHECK(rt->stats().graph_builds == 0);
  // Explicit strides that are the contiguous ones, and a stride of any
  // value in a dim of size 1, are contiguous memory: accepted.
  int64_t compact[2] = {2, 1}, oneRow[2] = {7, 1}, shapeOneRow[2] = {1, 2};
  DLTensor b = *inputs->pointers()[1];
  b.strides = compact;
  const DLTensor *strided[] = {inputs->pointers()[0], &b};
  CHECK(ev->run(strided, ok));
  DLTensor a1 = *inputs->pointers()[0];
  int64_t shapeA1[2] = {4, 1};
  a1.shape = shapeA1;
  b.shape = shapeOneRow;
  b.strides = oneRow;
  const DLTensor *rows[] = {&a1, &b};
  CHECK(ev->run(rows, ok));
}
