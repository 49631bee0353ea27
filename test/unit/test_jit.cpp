// test_jit.cpp - the JIT itself: one per process, deterministic IR, the
// object cache, optimisation levels and concurrent calls.
#include <unistd.h>

#include <thread>

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

TEST_CASE("a compiled program is reentrant across threads with their own contexts", "[jit]") {
  Program p = example("pipeline.hir");
  auto rt0 = makeRuntime();
  auto cp = sharedJit().compile(p, rt0, noCache());
  REQUIRE(cp);
  std::vector<examples::ExampleCase> cases =
      examples::exampleCases(std::string(HOSTJIT_SOURCE_DIR) + "/examples", "pipeline");
  const examples::ExampleCase &c = cases[1];
  std::vector<std::string> failures(4);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      auto rt = Runtime::create();
      if (!rt) return void(failures[t] = rt.error().message);
      auto inputs = InputSet::random(*rt, (*cp)->plan(), c.shapes, 100 + t);
      if (!inputs) return void(failures[t] = inputs.error().message);
      hj_value scalars[1];
      scalars[0].f32 = c.scalars[0].value.f32;
      for (int i = 0; i < 200; ++i) {
        void *data[1];
        int64_t dims[2];
        int32_t st = (*cp)->call((*rt)->context(), inputs->pointers().data(), scalars, data, dims);
        if (st) return void(failures[t] = hj_last_error());
        auto outs = makeOutputs(*rt, (*cp)->plan(), data, dims);
        std::string check = examples::checkExample(c, *inputs, outs);
        if (!check.empty()) return void(failures[t] = check);
      }
      if ((*rt)->stats().live_bytes != 0) failures[t] = "leaked";
    });
  }
  for (auto &th : threads) th.join();
  for (const std::string &f : failures) CHECK(f == "");
}
