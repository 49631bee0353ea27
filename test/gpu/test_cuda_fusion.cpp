// test_cuda_fusion.cpp - the example fusions on a real GPU through all four
// paths (evaluator, JIT, executor fallback, executor with given
// intermediates), and CUDA kernels that include <stdint.h> and their own
// headers, with options, never served a stale image from the cache.
#include "gpu_helpers.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "common/fusion_cases.h"
#include "common/inject.h"
#include "hostjit/exec/parity.h"

using namespace hostjit;
using namespace hostjit::gputest;
using namespace hostjit::test;

namespace {

struct CudaInputs : FusionInputs {
  CudaInputs(const Fusion &f, const FusionCase &c) : FusionInputs(f, c, cudaRuntime(), 23) {}
};

void writeFile(const std::filesystem::path &p, const std::string &text) {
  std::filesystem::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary | std::ios::trunc) << text;
}

}  // namespace

TEST_CASE("example fusions on the GPU: four paths, one record, correct results", "[cuda][fusion]") {
  for (const std::string &name : exampleFusions()) {
    Fusion f = loadExampleFusion(sourceDir(), name);
    for (const FusionCase &c : fusionCases(name)) {
      CudaInputs in(f, c);
      std::vector<std::string> firstRecord;
      std::vector<Tensor> firstOut;
      for (Path path : kPaths) {
        INFO(name << " on " << pathName(path));
        PathRunner r(f, path, cudaRuntime(), jit());
        hj_record_enable(r.rt()->context(), 1);
        auto out = r.run(*in.set, in.scalars);
        INFO((out ? "" : out.error().message));
        REQUIRE(out);
        auto record = r.rt()->recordLines();
        checkFusionReference(name, c, *in.set, *out);
        // Later calls reuse pooled and arena memory and compute the same.
        for (int i = 0; i < 3; ++i) {
          auto again = r.run(*in.set, in.scalars);
          REQUIRE(again);
          CHECK(!compareOutputs(*out, *again));
        }
        if (path == Path::Evaluator) {
          firstRecord = record;
          firstOut = std::move(*out);
          continue;
        }
        auto diff = compareRecords(firstRecord, record, "evaluator", pathName(path));
        if (diff) WARN(*diff);
        CHECK(!diff);
        auto odiff = compareOutputs(firstOut, *out);
        if (odiff) WARN(*odiff);
        CHECK(!odiff);
      }
    }
  }
}

TEST_CASE("example fusions on the GPU: 100 calls, the same memsets on every path", "[cuda][fusion]") {
  for (const std::string &name : exampleFusions()) {
    Fusion f = loadExampleFusion(sourceDir(), name);
    FusionCase c = fusionCases(name)[0];
    CudaInputs in(f, c);
    std::optional<uint64_t> memsets;
    for (Path path : kPaths) {
      INFO(name << " on " << pathName(path));
      PathRunner r(f, path, cudaRuntime(), jit());
      REQUIRE(r.run(*in.set, in.scalars));
      hj_reset_stats(r.rt()->context());
      for (int i = 1; i < 100; ++i) REQUIRE(r.run(*in.set, in.scalars));
      REQUIRE(hj_synchronize(r.rt()->context()) == HJ_OK);
      hj_stats s = r.rt()->stats();
      if (!memsets) memsets = s.memsets;
      CHECK(s.memsets == *memsets);
      CHECK(s.live_bytes == 0);
      if (name == "splitk") CHECK(s.memsets == 0);
      if (name == "alias_reduce" || name == "chain") CHECK(s.memsets == 99);
    }
  }
}

TEST_CASE("a CUDA kernel includes <stdint.h> and a header beside it, takes options, and a changed header recompiles",
          "[cuda][nvrtc]") {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("hostjit_gpu_include_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  writeFile(dir / "kernels" / "answer.cu",
            "#include <stdint.h>\n#include <cstdint>\n#include \"answer.h\"\n#ifndef BONUS\n#define BONUS 0\n#endif\n"
            "extern \"C\" __global__ void answer(int64_t *out) {\n"
            "  out[0] = ANSWER * 100 + EXTRA + BONUS + (int64_t)sizeof(std::int32_t) + INT8_MAX - 127;\n}\n");
  writeFile(dir / "kernels" / "answer.h", "#pragma once\n#define ANSWER 7\n");
  writeFile(dir / "answer.hir",
            "kernel @answer(ptr<i64>) {\n  cuda = \"kernels/answer.cu\"\n  entry = \"answer\"\n  nvrtc_options = \"-DEXTRA=5\"\n}\n\n"
            "func @main() -> (i64[1]) {\n  %out = alloc i64[1]\n  launch @answer grid(1, 1, 1) block(1, 1, 1) smem(0) (%out)\n"
            "  return %out\n}\n");
  ::setenv("HOSTJIT_CACHE_DIR", (dir / "cache").c_str(), 1);
  auto value = [&] {
    Program p = load((dir / "answer.hir").string());
    auto rt = cudaRuntime();
    auto ev = Evaluator::create(p, rt);
    INFO((ev ? "" : ev.error().message));
    REQUIRE(ev);
    auto out = ev->run({});
    REQUIRE(out);
    auto h = (*out)[0].toHost();
    REQUIRE(h);
    int64_t v = 0;
    std::memcpy(&v, h->data(), 8);
    return v;
  };
  CHECK(value() == 709);
  CHECK(value() == 709);  // from the cache
  writeFile(dir / "kernels" / "answer.h", "#pragma once\n#define ANSWER 9\n");
  CHECK(value() == 909);  // the header changed: a new image, in memory and on disk
  ::setenv("HOSTJIT_NVRTC_OPTIONS", "-DBONUS=1", 1);
  CHECK(value() == 910);
  ::unsetenv("HOSTJIT_NVRTC_OPTIONS");
  ::unsetenv("HOSTJIT_CACHE_DIR");
  fs::remove_all(dir);
}

TEST_CASE("injected failures on the GPU: every operation of every example fusion, through all four paths",
          "[cuda][inject]") {
  for (const std::string &name : exampleFusions()) {
    Fusion f = loadExampleFusion(sourceDir(), name);
    FusionCase c = fusionCases(name)[0];
    for (Path path : kPaths) {
      PathRunner r(f, path, cudaRuntime(), jit());
      FusionInputs in(f, c, r.rt(), 13);
      injectEverywhere(*r.rt(), [&] { return r.run(*in.set, in.scalars); }, name + " on " + pathName(path));
    }
  }
}

namespace {

// Runs the fault program once on a fresh CUDA runtime, through one path;
// returns the error the call, or the synchronisation after it, gave.
std::string faultThrough(Path path, bool sync) {
  hj_options o;
  hj_options_init(&o);
  o.backend = HJ_BACKEND_CUDA;
  o.check_zeroed = o.fill_nan = o.reuse_zeroed_memory = 0;
  o.sync = sync ? 1 : 0;
  auto rt = Runtime::create(o);
  REQUIRE(rt);
  auto f = loadFusionJson(sourceDir() + "/test/gpu/programs/fault.json");
  REQUIRE(f);
  std::optional<PathRunner> fusionPath;
  std::optional<Evaluator> ev;
  std::unique_ptr<CompiledProgram> cp;
  Program p = load(sourceDir() + "/test/gpu/programs/fault.hir");
  auto plan = makePlan(p);
  REQUIRE(plan);
  auto in = InputSet::random(*rt, *plan, {{"x", {1000}}}, 5);
  REQUIRE(in);
  Expected<std::vector<Tensor>> out = Error{};
  if (path == Path::Evaluator) {
    ev.emplace(std::move(*Evaluator::create(p, *rt)));
    out = ev->run(in->span());
  } else if (path == Path::Jit) {
    CompileOptions co;
    co.useCache = false;
    co.tiered = false;
    auto c = jit().compile(p, *rt, co);
    REQUIRE(c);
    cp = std::move(*c);
    out = cp->run(in->span());
  } else {
    fusionPath.emplace(*f, Path::Fallback, *rt, jit());
    out = fusionPath->run(*in, {});
  }
  std::string message = out ? "" : out.error().message;
  if (out) {  // queued before the trap ran: the fault shows at the next synchronisation
    out->clear();
    if (hj_synchronize((*rt)->context()) != HJ_OK) message = hj_last_error();
  }
  CHECK((*rt)->stats().live_bytes == 0);
  // Later calls fail too, saying why, and never blame themselves.
  void *p2 = nullptr;
  int64_t n = 4;
  CHECK(hj_alloc((*rt)->context(), &n, nullptr, 1, HJ_DTYPE_f32, 0, "later", &p2) == HJ_ERR_BACKEND);
  CHECK_THAT(std::string(hj_last_error()), Catch::StartsWith("a kernel failed on the device earlier ("));
  return message;
}

}  // namespace

TEST_CASE("a kernel that traps fails the call and later calls, and says which kernel with sync", "[cuda][.][fault]") {
  // A trap leaves CUDA unusable in this process (the driver wants it
  // restarted), so the three paths take turns: each run is checked, then the
  // next starts over in a fresh process (the GPU run does that by running
  // this binary once per case: HOSTJIT_FAULT_CASE=0..5).
  const char *which = std::getenv("HOSTJIT_FAULT_CASE");
  int c = which ? std::atoi(which) : 0;
  Path path = c / 2 == 0 ? Path::Evaluator : c / 2 == 1 ? Path::Jit : Path::Fallback;
  bool sync = c % 2 == 1;
  INFO(pathName(path) << (sync ? ", HOSTJIT_SYNC" : ""));
  std::string message = faultThrough(path, sync);
  if (sync) {
    CHECK_THAT(message, Catch::StartsWith("kernel @trap ("));
    CHECK_THAT(message, Catch::Contains(path == Path::Fallback ? "fault.json: segments[1] (bad))"
                                                               : "(launch 2 of @main at "));
    if (path != Path::Fallback) CHECK_THAT(message, Catch::Contains("fault.hir:16:3)"));
    CHECK_THAT(message, Catch::Contains("failed on the device: CUDA_ERROR_"));
  } else {
    CHECK_THAT(message, Catch::StartsWith("a kernel failed on the device earlier (CUDA_ERROR_"));
    CHECK_THAT(message, Catch::Contains("HOSTJIT_SYNC=1"));
  }
  // Everything on the faulted context is released; a new context in this
  // process is refused with the driver's reason, never with a crash.
  hj_options o;
  hj_options_init(&o);
  o.backend = HJ_BACKEND_CUDA;
  hj_context *ctx = nullptr;
  int32_t st = hj_context_create(&o, &ctx);
  if (st == HJ_OK) {
    hj_context_destroy(ctx);  // a driver that recovers: fine as well
  } else {
    CHECK_THAT(std::string(hj_last_error()),
               Catch::StartsWith("CUDA device 0 cannot be used again in this process: a kernel failed on it earlier ("));
  }
}
