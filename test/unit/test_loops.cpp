// test_loops.cpp - counted loops: the values a loop computes, 0, 1 and many
// iterations through the evaluator and the JIT, loops built with the C++
// API, and loops that the JIT's chunking must keep in one function.
#include "helpers.h"

#include <cstring>

#include "hostjit/exec/parity.h"

using namespace hostjit;
using namespace hostjit::test;

namespace {

const std::string kLoops = std::string(HOSTJIT_SOURCE_DIR) + "/test/programs/loops.hir";

}  // namespace

TEST_CASE("loops: test/programs/loops.hir computes y = x * (1 + ... + reps), for 0, 1 and 4 passes", "[loops]") {
  Program p = parseOk(readFile(kLoops), kLoops);
  for (bool jit : {false, true}) {
    for (int64_t reps : {0, 1, 4}) {
      INFO((jit ? "jit" : "eval") << ", reps " << reps);
      auto rt = makeRuntime();
      Runner runner(p, rt, jit);
      auto in = InputSet::random(rt, runner.plan(), {{"x", {6, 3}}}, 42);
      REQUIRE(in);
      ScalarArg s = ScalarArg::i64(reps);
      hj_record_enable(rt->context(), 1);
      auto out = runner.run(in->span(), {&s, 1});
      INFO((out ? "" : out.error().message));
      REQUIRE(out);
      std::vector<float> x(18);
      std::memcpy(x.data(), in->hostData(0).data(), sizeof(float) * 18);
      std::vector<float> y = floats((*out)[0]);
      REQUIRE(y.size() == 18);
      for (size_t i = 0; i < 18; ++i) {
        float want = 0;  // the kernel's own order of operations
        for (int64_t r = 0; r < reps; ++r) want += x[i] * static_cast<float>(r + 1);
        CHECK(y[i] == want);
      }
      // The last launch sees %reps; the body's launches run 2 * 6 per pass,
      // the inner loop over [r + 1, 3) once per j.
      CHECK(doubles((*out)[1])[0] == static_cast<double>(reps));
      uint64_t inner = 0;
      for (int64_t r = 0; r < reps; ++r) inner += static_cast<uint64_t>(std::max<int64_t>(0, 3 - (r + 1)));
      hj_stats st = rt->stats();
      CHECK(st.launches == static_cast<uint64_t>(reps) * 12 + inner + 1);
      CHECK(st.allocs == st.frees + 2);  // the two outputs
      CHECK(st.live_bytes > 0);
    }
  }
}

TEST_CASE("loops: built with the C++ API, nested, a kernel sees each index", "[loops]") {
  ProgramBuilder b;
  auto scalar = [](DType t) { return ParamType{false, t, false, 0}; };
  KernelId k = b.kernel("record_scalars", {ParamType{true, DType::f64, false, 0}, scalar(DType::i64),
                                           scalar(DType::i32), scalar(DType::f32), scalar(DType::f64),
                                           scalar(DType::Bool)},
                        std::nullopt, std::nullopt, "record_scalars");
  ValueId n = b.scalarInput("n", DType::i64);
  ValueId log = b.alloc("log", DType::f64, {Operand::integer(12)});
  ValueId i = b.forBegin("i", Operand::integer(0), Operand::of(n));
  ValueId j = b.forBegin("j", Operand::of(i), Operand::integer(3));
  ValueId ij = b.op("ij", OpCode::Mul, Operand::of(i), Operand::integer(10));
  ValueId v = b.op("v", OpCode::Add, Operand::of(ij), Operand::of(j));
  b.launch(k, {Operand::integer(1), Operand::integer(1), Operand::integer(1)},
           {Operand::integer(1), Operand::integer(1), Operand::integer(1)}, Operand::integer(0),
           {Operand::of(log), Operand::of(v), Operand::integer(0), Operand::floating(0), Operand::floating(0),
            Operand::integer(0)});
  b.forEnd();
  b.forEnd();
  b.result({DType::f64, {12}});
  b.ret({Operand::of(log)});
  Program p = b.finish();
  REQUIRE(verify(p).empty());
  CHECK(print(p).find("  for %i = 0 to %n {\n    for %j = %i to 3 {\n      %ij = mul %i, 10\n") != std::string::npos);
  for (bool jit : {false, true}) {
    INFO((jit ? "jit" : "eval"));
    auto rt = makeRuntime();
    Runner runner(p, rt, jit);
    ScalarArg s = ScalarArg::i64(3);
    hj_record_enable(rt->context(), 1);
    auto out = runner.run({}, {&s, 1});
    REQUIRE(out);
    // (i, j) = (0,0) (0,1) (0,2) (1,1) (1,2) (2,2): the last launch wrote 22.
    CHECK(doubles((*out)[0])[0] == 22.0);
    CHECK(rt->stats().launches == 6);
  }
}

TEST_CASE("loops: a loop the JIT's 64-step chunks would cut stays whole, with parity", "[loops]") {
  // 60 allocations before the loop, a body of 20 steps, 10 frees after: the
  // loop spans the first chunk boundary.
  std::string text = "kernel @k(ptr<f32>, i64) {\n  host = \"empty\"\n}\nfunc @main(%x: f32[?], %n: i64) -> () {\n";
  for (int i = 0; i < 60; ++i) text += "  %a" + std::to_string(i) + " = alloc f32[" + std::to_string(i + 1) + "]\n";
  text += "  for %i = 0 to %n {\n    %e = add %i, 1\n";
  for (int i = 0; i < 6; ++i) {
    std::string t = "%t" + std::to_string(i);
    text += "    " + t + " = alloc f32[%e]\n    launch @k grid(1, 1, 1) block(1, 1, 1) smem(0) (" + t + ", %i)\n";
    text += "    free " + t + "\n";
  }
  text += "  }\n";
  for (int i = 0; i < 60; ++i) text += "  free %a" + std::to_string(i) + "\n";
  text += "  return\n}\n";
  Program p = parseOk(text);
  auto plan = makePlan(p);
  REQUIRE(plan);
  REQUIRE(plan->steps.size() > 64);
  for (int64_t n : {0, 1, 5}) {
    INFO("n " << n);
    std::vector<std::string> records[2];
    for (int jit = 0; jit < 2; ++jit) {
      auto rt = makeRuntime();
      REQUIRE(hj_load_host_library(rt->context(), HOSTJIT_EXAMPLE_KERNELS) == HJ_OK);
      Runner runner(p, rt, jit == 1);
      auto in = InputSet::random(rt, runner.plan(), {{"x", {4}}}, 7);
      REQUIRE(in);
      ScalarArg s = ScalarArg::i64(n);
      hj_record_enable(rt->context(), 1);
      auto out = runner.run(in->span(), {&s, 1});
      INFO((out ? "" : out.error().message));
      REQUIRE(out);
      records[jit] = rt->recordLines();
      CHECK(rt->stats().launches == static_cast<uint64_t>(n) * 6);
      CHECK(rt->stats().live_bytes == 0);
    }
    auto diff = compareRecords(records[0], records[1]);
    CHECK(!diff);
  }
}

TEST_CASE("loops: graph mode keys the trip count and replays fast", "[loops][graph]") {
  Program p = parseOk(readFile(kLoops), kLoops);
  for (bool jit : {false, true}) {
    INFO((jit ? "jit" : "eval"));
    auto rt = makeRuntime();
    Runner runner(p, rt, jit, OptLevel::O2, true);
    auto in = InputSet::random(rt, runner.plan(), {{"x", {5, 2}}}, 3);
    REQUIRE(in);
    for (int64_t reps : {2, 2, 3, 3, 2}) {
      ScalarArg s = ScalarArg::i64(reps);
      auto out = runner.run(in->span(), {&s, 1});
      REQUIRE(out);
      CHECK(doubles((*out)[1])[0] == static_cast<double>(reps));
    }
    hj_stats st = rt->stats();
    CHECK(st.graph_builds == 2);  // one per trip count
    CHECK(st.graph_replays == 5);  // the building calls launch their graph too
    CHECK(st.graph_fast == 3);
    // Per call: 2 launches per row and pass, 3 from the inner loops, 1 at the end.
    CHECK(st.launches == 3 * (2 * 10 + 3 + 1) + 2 * (3 * 10 + 3 + 1));
  }
}
