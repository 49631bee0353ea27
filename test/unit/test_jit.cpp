// test_jit.cpp - the JIT itself: one per process, deterministic IR, the
// object cache, optimisation levels and concurrent calls.
#include <unistd.h>

#include <thread>

#include "common/fusion_cases.h"
#include "helpers.h"
#include "hostjit/exec/parity.h"
#include "reference.h"

using namespace hostjit;
using namespace hostjit::test;

namespace {
Program example(const char *name) {
  Diagnostics d;
  Program p = parseFile(std::string(HOSTJIT_SOURCE_DIR) + "/examples/" + name, d);
  REQUIRE(d.empty());
  return p;
}
}  // namespace

TEST_CASE("one Jit per process", "[jit]") {
  sharedJit();
  auto second = Jit::create();
  REQUIRE(!second);
  CHECK(second.error().message == "a hostjit::Jit already exists in this process: create one and share it");
}

TEST_CASE("emitted IR is deterministic and holds no process pointers", "[jit]") {
  Program p = example("pipeline.hir");
  auto a = Jit::emitLLVM(p, OptLevel::Light, false);
  auto b = Jit::emitLLVM(p, OptLevel::Light, false);
  REQUIRE(a);
  REQUIRE(b);
  CHECK(*a == *b);
  CHECK(a->find("inttoptr") == std::string::npos);
  CHECK(a->find("define i32 @hostjit_entry(ptr %ctx, ptr %kernels, ptr %inputs, ptr %scalars, ptr %out_data, ptr "
                "%out_dims)") != std::string::npos);
  auto asmText = Jit::emitAsm(p, OptLevel::O2);
  REQUIRE(asmText);
  CHECK(asmText->find("hostjit_entry:") != std::string::npos);
}

TEST_CASE("the object cache is used, and a corrupt entry is rebuilt", "[jit]") {
  std::string dir = std::filesystem::temp_directory_path() / ("hostjit-cache-test-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  Program p = example("grid_sum.hir");
  auto rt = makeRuntime();
  CompileOptions co;
  co.cacheDir = dir;
  co.tiered = false;  // each compile writes its object before returning
  JitStats before = sharedJit().stats();
  {
    auto cold = sharedJit().compile(p, rt, co);
    REQUIRE(cold);
    CHECK(!(*cold)->fromCache());
  }
  auto warm = sharedJit().compile(p, rt, co);
  REQUIRE(warm);
  CHECK((*warm)->fromCache());
  // Truncate the entry: it must be detected, rebuilt and rewritten.
  std::vector<std::filesystem::path> entries;
  for (auto &e : std::filesystem::directory_iterator(dir)) entries.push_back(e.path());
  REQUIRE(entries.size() == 1);
  std::filesystem::resize_file(entries[0], std::filesystem::file_size(entries[0]) / 2);
  auto rebuilt = sharedJit().compile(p, rt, co);
  REQUIRE(rebuilt);
  CHECK(!(*rebuilt)->fromCache());
  auto again = sharedJit().compile(p, rt, co);
  REQUIRE(again);
  CHECK((*again)->fromCache());
  JitStats after = sharedJit().stats();
  CHECK(after.cacheHits - before.cacheHits == 2);
  CHECK(after.cacheCorrupt - before.cacheCorrupt == 1);
  CHECK(after.compiles - before.compiles == 2);
  // Programs from the cache compute the same result.
  auto inputs = InputSet::random(rt, (*again)->plan(), {{"x", {10, 10}}}, 1);
  REQUIRE(inputs);
  auto r1 = (*again)->run(inputs->span());
  auto r2 = (*rebuilt)->run(inputs->span());
  REQUIRE(r1);
  REQUIRE(r2);
  CHECK(!compareOutputs(*r1, *r2));
  std::filesystem::remove_all(dir);
}

TEST_CASE("a compiled program is reentrant across 8 threads with their own contexts", "[jit]") {
  Program p = example("pipeline.hir");
  auto rt0 = makeRuntime();
  auto cp = sharedJit().compile(p, rt0, noCache());
  REQUIRE(cp);
  std::vector<examples::ExampleCase> cases =
      examples::exampleCases(std::string(HOSTJIT_SOURCE_DIR) + "/examples", "pipeline");
  const examples::ExampleCase &c = cases[1];
  constexpr int kThreads = 8, kCalls = 2000;
  std::vector<std::string> failures(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      auto rt = Runtime::create(testOptions());
      if (!rt) return void(failures[t] = rt.error().message);
      auto inputs = InputSet::random(*rt, (*cp)->plan(), c.shapes, 100 + t);
      if (!inputs) return void(failures[t] = inputs.error().message);
      hj_value scalars[1];
      scalars[0].f32 = c.scalars[0].value.f32;
      for (int i = 0; i < kCalls; ++i) {
        void *data[1];
        int64_t dims[2];
        int32_t st = (*cp)->call((*rt)->context(), inputs->pointers().data(), scalars, data, dims);
        if (st) return void(failures[t] = hj_last_error());
        auto outs = makeOutputs(*rt, (*cp)->plan(), data, dims);
        if (i % 100 == 0) {  // the reference check is the slow part
          std::string check = examples::checkExample(c, *inputs, outs);
          if (!check.empty()) return void(failures[t] = check);
        }
      }
      // The pool's books balance: 5 allocations and frees per call, nothing live.
      hj_stats s = (*rt)->stats();
      if (s.live_bytes != 0) failures[t] = "leaked " + std::to_string(s.live_bytes) + " bytes";
      else if (s.allocs != 5u * kCalls || s.frees != s.allocs) failures[t] = "allocs and frees do not balance";
      else if (s.launches != 3u * kCalls) failures[t] = "launches miscounted";
    });
  }
  for (auto &th : threads) th.join();
  for (const std::string &f : failures) CHECK(f == "");
}

namespace {
// A chain of copies through n intermediates, every fourth step with a
// zero_init resets_to_zero semaphore: long enough to span several chunks.
std::string chainProgram(int n) {
  std::string text =
      "kernel @copy(ptr<f32>, ptr<f32>, i64) {\n  host = \"copy_f32\"\n}\n\n"
      "kernel @count(ptr<i32>, ptr<i32>) {\n  host = \"count_and_reset\"\n}\n\n"
      "func @main(%x: f32[?]) -> (f32[?], i32[1]) {\n  %n = size %x, 0\n  %c = alloc i32[1]\n";
  std::string prev = "%x";
  for (int i = 0; i < n; ++i) {
    std::string w = "%w" + std::to_string(i);
    text += "  " + w + " = alloc f32[%n]\n  launch @copy grid(1, 1, 1) block(1, 1, 1) smem(0) (" + prev + ", " + w + ", %n)\n";
    if (i % 4 == 0)
      text += "  %s" + std::to_string(i) + " = alloc i32[1] zero_init resets_to_zero\n"
              "  launch @count grid(1, 1, 1) block(1, 1, 1) smem(0) (%s" + std::to_string(i) + ", %c)\n"
              "  free %s" + std::to_string(i) + "\n";
    if (prev != "%x") text += "  free " + prev + "\n";
    prev = w;
  }
  text += "  return " + prev + ", %c\n}\n";
  return text;
}
}  // namespace

TEST_CASE("tiered compiles: the evaluator serves calls until the native code is linked, with the same calls", "[jit]") {
  Program p = parseOk(chainProgram(300));
  auto rtEval = makeRuntime(), rtJit = makeRuntime();
  auto plan = makePlan(p);
  REQUIRE(plan);
  auto inputs = InputSet::random(rtEval, *plan, {{"x", {37}}}, 3);
  REQUIRE(inputs);
  Runner ev(p, rtEval, false);
  // The first call's record (the zeroed arena grows once), then a later one's.
  hj_record_enable(rtEval->context(), 1);
  auto expected = ev.run(inputs->span());
  REQUIRE(expected);
  auto firstRecord = rtEval->recordLines();
  hj_record_enable(rtEval->context(), 1);
  auto second = ev.run(inputs->span());
  REQUIRE(second);
  auto expectedRecord = rtEval->recordLines();
  CHECK(firstRecord != expectedRecord);
  CHECK(hostOf((*expected)[0]) == floats(inputs->hostData(0)));

  CompileOptions co = noCache();
  co.tiered = true;
  auto cp = sharedJit().compile(p, rtJit, co);
  REQUIRE(cp);
  // Calls made while the native code compiles (most or all of them, on this
  // machine) and after it is linked give the same records and outputs.
  int onEvaluator = 0;
  for (int i = 0; i < 50; ++i) {
    onEvaluator += !(*cp)->native();
    hj_record_enable(rtJit->context(), 1);
    auto out = (*cp)->run(inputs->span());
    REQUIRE(out);
    auto diff = compareRecords(i == 0 ? firstRecord : expectedRecord, rtJit->recordLines());
    INFO((diff ? *diff : ""));
    CHECK(!diff);
    CHECK(!compareOutputs(*expected, *out));
  }
  REQUIRE((*cp)->waitNative());
  CHECK((*cp)->native());
  CHECK((*cp)->nativeReadyMs() > 0);
  hj_record_enable(rtJit->context(), 1);
  auto native = (*cp)->run(inputs->span());
  REQUIRE(native);
  CHECK(!compareRecords(expectedRecord, rtJit->recordLines()));
  CHECK(!compareOutputs(*expected, *native));
  INFO(onEvaluator << " of 50 calls ran on the evaluator");
  CHECK(onEvaluator > 0);
}

TEST_CASE("tiered compiles: a program destroyed before its native code is ready, and calls racing the swap", "[jit]") {
  Program p = example("pipeline.hir");
  auto rt = makeRuntime();
  CompileOptions co = noCache();
  co.tiered = true;
  // Programs dropped at once: their background compiles find them gone.
  for (int i = 0; i < 5; ++i) {
    auto cp = sharedJit().compile(p, rt, co);
    REQUIRE(cp);
  }
  // Two threads call while the swap happens; every call computes the same.
  auto cp = sharedJit().compile(p, rt, co);
  REQUIRE(cp);
  std::vector<examples::ExampleCase> cases =
      examples::exampleCases(std::string(HOSTJIT_SOURCE_DIR) + "/examples", "pipeline");
  const examples::ExampleCase &c = cases[0];
  std::vector<std::string> failures(2);
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t)
    threads.emplace_back([&, t] {
      auto trt = Runtime::create(testOptions());
      if (!trt) return void(failures[t] = trt.error().message);
      auto in = InputSet::random(*trt, (*cp)->plan(), c.shapes, 40 + t);
      if (!in) return void(failures[t] = in.error().message);
      for (int i = 0; i < 400; ++i) {
        hj_value s[1];
        s[0].f32 = c.scalars[0].value.f32;
        void *data[1];
        int64_t dims[2];
        if ((*cp)->call((*trt)->context(), in->pointers().data(), s, data, dims)) return void(failures[t] = hj_last_error());
        auto outs = makeOutputs(*trt, (*cp)->plan(), data, dims);
        std::string bad = examples::checkExample(c, *in, outs);
        if (!bad.empty()) return void(failures[t] = bad);
      }
    });
  for (auto &th : threads) th.join();
  CHECK(failures[0] == "");
  CHECK(failures[1] == "");
  REQUIRE((*cp)->waitNative());
}

TEST_CASE("a call that fails in a late chunk frees everything, as the evaluator does", "[jit]") {
  // A launch at the end whose grid is 0 at run time: hj_launch refuses it
  // after about 450 steps, in the last chunk, with buffers live.
  std::string text = chainProgram(300);
  text.insert(text.rfind("  return"),
              "  %zero = sub %n, 100\n  launch @copy grid(%zero, 1, 1) block(1, 1, 1) smem(0) (%x, %w299, %n)\n");
  Program p = parseOk(text);
  auto plan = makePlan(p);
  REQUIRE(plan);
  std::vector<std::string> records[2];
  auto inputRt = makeRuntime();  // inputs shared by both runs: records name their pointers
  auto inputs = InputSet::random(inputRt, *plan, {{"x", {100}}}, 3);
  REQUIRE(inputs);
  for (int jit = 0; jit < 2; ++jit) {
    auto rt = makeRuntime();
    Runner r(p, rt, jit == 1);
    hj_record_enable(rt->context(), 1);
    auto out = r.run(inputs->span());
    REQUIRE(!out);
    CHECK(out.error().message == "launch of @copy grid(0, 1, 1) block(1, 1, 1): grid.x is 0, expected 1 to 2147483647");
    records[jit] = rt->recordLines();
    CHECK(records[jit].size() > 400);
    CHECK(rt->stats().live_bytes == 0);
    int32_t zero = 0;
    REQUIRE(hj_arena_check_zero(rt->context(), &zero) == HJ_OK);
    CHECK(zero == 1);
  }
  auto diff = compareRecords(records[0], records[1]);
  INFO((diff ? *diff : ""));
  CHECK(!diff);
}
