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

namespace {

const std::string kCarried = std::string(HOSTJIT_SOURCE_DIR) + "/test/programs/loops_carried.hir";

// accumulate_step's arithmetic: to[k] = from[k] + x[k] * (i + 1), in f32.
void accumulateStep(const std::vector<float> &from, std::vector<float> &to, const std::vector<float> &x, int64_t i) {
  for (size_t k = 0; k < to.size(); ++k) to[k] = from[k] + x[k] * static_cast<float>(i + 1);
}

}  // namespace

TEST_CASE("loops: carried buffers: ping-pong, swap and nested loops give exact values, and leak nothing", "[loops]") {
  Program p = parseOk(readFile(kCarried), kCarried);
  for (bool jit : {false, true}) {
    for (int64_t n : {0, 1, 2, 5}) {
      INFO((jit ? "jit" : "eval") << ", n " << n);
      auto rt = makeRuntime();
      Runner runner(p, rt, jit);
      auto in = InputSet::random(rt, runner.plan(), {{"x", {9}}}, 42);
      REQUIRE(in);
      std::vector<float> x(9);
      std::memcpy(x.data(), in->hostData(0).data(), sizeof(float) * 9);
      ScalarArg s = ScalarArg::i64(n);
      {
        auto out = runner.run(in->span(), {&s, 1});
        INFO((out ? "" : out.error().message));
        REQUIRE(out);
        REQUIRE(out->size() == 3);
        // %sum: a new buffer per iteration, the last one freed.
        std::vector<float> sum = x;
        for (int64_t i = 0; i < n; ++i) {
          std::vector<float> next(9);
          accumulateStep(sum, next, x, i);
          sum = next;
        }
        // %a, %b: b = 2x; for j in [1, n): b += a * (1 + ... + j), then swap.
        std::vector<float> a = x, b(9);
        accumulateStep(x, b, x, 0);
        for (int64_t j = 1; j < n; ++j) {
          for (int64_t k = 0; k < j; ++k) accumulateStep(b, b, a, k);
          std::swap(a, b);
        }
        CHECK(floats((*out)[0]) == sum);
        CHECK(floats((*out)[1]) == a);
        CHECK(floats((*out)[2]) == b);
        if (n == 5) CHECK(sum[0] == x[0] + x[0] * 1 + x[0] * 2 + x[0] * 3 + x[0] * 4 + x[0] * 5);
        // Allocated: %init, a %next per iteration, %a0, %b0, %sem0, and a
        // %seen and a %fresh per iteration; everything but the three
        // outputs is freed by the call.
        hj_stats st = rt->stats();
        CHECK(st.allocs == static_cast<uint64_t>(4 + 3 * n));
        CHECK(st.frees == st.allocs - 3);
        CHECK(st.live_bytes == 3 * 9 * sizeof(float));
      }
      CHECK(rt->stats().live_bytes == 0);
    }
  }
}

TEST_CASE("loops: carried buffers: the plan shares one slot and makes every possible result an output", "[loops]") {
  Program p = parseOk(readFile(kCarried), kCarried);
  auto plan = makePlan(p);
  REQUIRE(plan);
  std::map<std::string, uint32_t> flags, slot;
  for (const Step &s : plan->steps)
    if (const auto *a = std::get_if<step::Alloc>(&s)) flags[a->name] = a->flags.bits, slot[a->name] = a->slot.index;
  // Whatever may be returned (the inits, the yielded %next) is the caller's.
  for (const char *out : {"init", "next", "a0", "b0"}) CHECK((flags.at(out) & HJ_ALLOC_OUTPUT) != 0);
  for (const char *mine : {"sem0", "fresh", "seen"}) CHECK((flags.at(mine) & HJ_ALLOC_OUTPUT) == 0);
  CHECK(flags.at("fresh") == (HJ_ALLOC_ZERO_INIT | HJ_ALLOC_RESETS_TO_ZERO));
  // Moves: %next to %init's slot; %inner and %p swapped between the slots
  // of %b0 and %a0; %fresh to %sem0's. The inner loop hands %t on unchanged:
  // no move.
  std::vector<std::pair<std::vector<uint32_t>, std::vector<uint32_t>>> moves;
  auto indices = [](const SlotRefs &refs) {
    std::vector<uint32_t> out;
    for (SlotRef r : refs) out.push_back(r.index);
    return out;
  };
  for (const Step &s : plan->steps)
    if (const auto *m = std::get_if<step::Move>(&s)) moves.push_back({indices(m->from), indices(m->to)});
  using Slots = std::vector<uint32_t>;
  REQUIRE(moves.size() == 3);
  CHECK(moves[0] == std::pair{Slots{slot.at("next")}, Slots{slot.at("init")}});
  CHECK(moves[1] == std::pair{Slots{slot.at("b0"), slot.at("a0")}, Slots{slot.at("a0"), slot.at("b0")}});
  CHECK(moves[2] == std::pair{Slots{slot.at("fresh")}, Slots{slot.at("sem0")}});
  REQUIRE(plan->outputs.size() == 3);
  CHECK(plan->outputs[0].slot.index == slot.at("init"));
  CHECK(plan->outputs[1].slot.index == slot.at("a0"));
  CHECK(plan->outputs[2].slot.index == slot.at("b0"));
}

TEST_CASE("loops: carried buffers built with the C++ API: printed, parsed back, run", "[loops]") {
  ProgramBuilder b;
  ParamType f32p{true, DType::f32, false, 0}, i64{false, DType::i64, false, 0};
  KernelId copy = b.kernel("copy_f32", {f32p, f32p, i64}, std::nullopt, std::nullopt, "copy_f32");
  KernelId step = b.kernel("accumulate_step", {f32p, f32p, f32p, i64, i64}, std::nullopt, std::nullopt,
                           "accumulate_step");
  ValueId x = b.tensorInput("x", DType::f32, {kDynamic});
  ValueId n = b.scalarInput("n", DType::i64);
  std::array<Operand, 3> one{Operand::integer(1), Operand::integer(1), Operand::integer(1)};
  ValueId len = b.op("len", OpCode::Size, Operand::of(x), Operand::integer(0));
  ValueId init = b.alloc("init", DType::f32, {Operand::of(len)});
  b.launch(copy, one, one, Operand::integer(0), {Operand::of(x), Operand::of(init), Operand::of(len)});
  auto loop = b.forBegin("i", Operand::integer(0), Operand::of(n), {{"acc", Operand::of(init), "final"}});
  REQUIRE(loop.carried.size() == 1);
  ValueId rows = b.op("rows", OpCode::Size, Operand::of(loop.carried[0]), Operand::integer(0));
  CHECK(b.program().value(rows).expr == b.program().value(len).expr);  // the init's extent
  ValueId next = b.alloc("next", DType::f32, {Operand::of(rows)});
  b.launch(step, one, one, Operand::integer(0),
           {Operand::of(loop.carried[0]), Operand::of(next), Operand::of(x), Operand::of(rows), Operand::of(loop.index)});
  b.free(Operand::of(loop.carried[0]));
  b.yield({Operand::of(next)});
  b.forEnd();
  b.result({DType::f32, {kDynamic}});
  b.ret({Operand::of(loop.results[0])});
  Program p = b.finish();
  REQUIRE(verify(p).empty());
  std::string text = print(p);
  CHECK(text.find("  %final = for %i = 0 to %n iter(%acc = %init) {\n    %rows = size %acc, 0\n") != std::string::npos);
  CHECK(text.find("    yield %next\n  }\n  return %final\n") != std::string::npos);
  CHECK(print(parseOk(text)) == text);
  for (bool jit : {false, true}) {
    INFO((jit ? "jit" : "eval"));
    auto rt = makeRuntime();
    Runner runner(p, rt, jit);
    auto in = InputSet::random(rt, runner.plan(), {{"x", {5}}}, 3);
    REQUIRE(in);
    std::vector<float> xs(5);
    std::memcpy(xs.data(), in->hostData(0).data(), sizeof(float) * 5);
    ScalarArg s = ScalarArg::i64(3);
    auto out = runner.run(in->span(), {&s, 1});
    REQUIRE(out);
    std::vector<float> want = xs;
    for (int64_t i = 0; i < 3; ++i) accumulateStep(want, want, xs, i);
    CHECK(floats((*out)[0]) == want);
    CHECK(rt->stats().allocs == rt->stats().frees + 1);
  }
}

TEST_CASE("loops: carried buffers: strides and streams must match too", "[loops][verifier]") {
  auto v = verifierProblems(R"(func @main(%x: f32[?]) -> (f32[?]) {
  %n = size %x, 0
  %t = alloc f32[%n]
  %r = for %i = 0 to %n iter(%acc = %t) {
    %next = alloc f32[%n] strides[1]
    free %acc
    yield %next
  }
  return %r
}
)");
  CHECK(v == std::vector<std::string>{"7:11: yields %next as %acc, but its strides are strides[1] where those of %acc "
                                      "are contiguous: a carried buffer keeps the strides of its init"});
  v = verifierProblems(R"(func @main(%x: f32[?]) -> (f32[?]) {
  %n = size %x, 0
  %side = stream
  %t = alloc f32[%n]
  %r = for %i = 0 to %n iter(%acc = %t) {
    on %side {
      %next = alloc f32[%n]
    }
    free %acc
    yield %next
  }
  return %r
}
)");
  CHECK(v == std::vector<std::string>{"10:11: yields %next as %acc, but %next is allocated on stream %side and %acc on "
                                      "the main stream: a carried buffer stays on the stream of its init"});
}

TEST_CASE("loops: carried buffers: a failure at any operation frees the same buffers in the evaluator and the JIT",
          "[loops]") {
  Program p = parseOk(readFile(kCarried), kCarried);
  ScalarArg s = ScalarArg::i64(4);
  // One input for every run: records name input pointers.
  auto inputRt = makeRuntime();
  auto plan = makePlan(p);
  REQUIRE(plan);
  auto in = InputSet::random(inputRt, *plan, {{"x", {9}}}, 42);
  REQUIRE(in);
  auto attempt = [&](bool jit, uint64_t failAt, std::vector<std::string> *records) {
    auto rt = makeRuntime();
    Runner runner(p, rt, jit);
    hj_inject_failure(rt->context(), failAt);
    hj_record_enable(rt->context(), 1);
    auto out = runner.run(in->span(), {&s, 1});
    *records = rt->recordLines();
    if (out) return std::string();
    CHECK(out.error().status == HJ_ERR_INJECTED);
    CHECK(rt->stats().live_bytes == 0);
    CHECK(rt->stats().allocs == rt->stats().frees);
    return out.error().message;
  };
  std::vector<std::string> baseline;
  REQUIRE(attempt(false, 0, &baseline).empty());
  size_t inLoops = 0;
  for (uint64_t n = 1;; ++n) {
    INFO("operation " << n);
    std::vector<std::string> records[2];
    std::string eval = attempt(false, n, &records[0]), jit = attempt(true, n, &records[1]);
    CHECK(eval == jit);
    CHECK(!compareRecords(records[0], records[1]));
    if (eval.empty()) break;  // past the last operation
    for (const char *carried : {"%next", "%fresh", "%seen", "@accumulate_step", "@count_and_reset"})
      inLoops += eval.find(carried) != std::string::npos;
  }
  CHECK(inLoops > 10);  // most operations are in the loops, carried buffers live
}
