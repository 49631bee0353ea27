// test_cuda_triton.cpp - a kernel written in Triton for the tests
// (test/gpu/triton/row_normalize.py), compiled by Triton while the test
// runs, declared from its cache entry with Triton's launch ABI and run
// through hostjit (evaluator, JIT, graph mode; cubin and PTX) against a
// reference. Skipped, saying so, where Python has no Triton.
#define CATCH_CONFIG_EXTERNAL_INTERFACES
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>

#include "gpu_helpers.h"
#include "hostjit/exec/host_data.h"
#include "hostjit/fusion/triton.h"

using namespace hostjit;
using namespace hostjit::gputest;

namespace {

std::string python() {
  const char *env = std::getenv("HOSTJIT_PYTHON");
  return env && *env ? env : "python3";
}

// Runs `cmd` and gives its standard output, or nullopt when it fails.
std::optional<std::string> output(const std::string &cmd) {
  FILE *f = popen(cmd.c_str(), "r");
  if (!f) return std::nullopt;
  std::string out;
  char buf[512];
  while (size_t n = fread(buf, 1, sizeof buf, f)) out.append(buf, n);
  if (pclose(f) != 0) return std::nullopt;
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

// The program: the declaration import-triton makes, with `image`, and a
// function launching it on one program per row, its scratch allocated as
// Triton's launcher does.
std::string program(const TritonKernel &k, const std::string &image) {
  std::string decl = tritonHirDeclaration(k);
  std::string at = "  image = \"";
  size_t i = decl.find(at);
  REQUIRE(i != std::string::npos);
  size_t end = decl.find('\n', i);
  decl.replace(i, end - i, at + image + "\"");
  std::string n = toString(k.params[2]) == "i64" ? "%cols" : "%cols32";
  std::string s = decl + "\nfunc @main(%x: f32[?, ?]) -> (f32[?, ?]) {\n  %rows = size %x, 0\n  %cols = size %x, 1\n"
                  "  %cols32 = to_i32 %cols\n  %out = alloc f32[%rows, %cols]\n";
  std::string args = "%x, %out, " + n;
  for (uint32_t h = 0; h < k.hidden; ++h) {
    bool global = k.paramNames[k.params.size() - k.hidden + h] == "global_scratch";
    int64_t per = (global ? k.globalScratchSize : k.profileScratchSize) * k.numCtas;
    std::string name = global ? "%gs" : "%ps";
    s += "  " + name + "_bytes = mul %rows, " + std::to_string(per) + "\n  " + name + " = alloc u8[" + name +
         "_bytes]" + (global ? "" : " zero_init") + "\n";
    args += ", " + name;
  }
  s += "  launch @row_normalize grid(%rows, 1, 1) block(" + std::to_string(k.blockThreads()) + ", 1, 1) smem(" +
       std::to_string(k.shared) + ") (" + args + ")\n";
  for (uint32_t h = 0; h < k.hidden; ++h)
    s += std::string("  free ") + (k.paramNames[k.params.size() - k.hidden + h] == "global_scratch" ? "%gs" : "%ps") +
         "\n";
  return s + "  return %out\n}\n";
}

}  // namespace

TEST_CASE("triton: a kernel Triton compiles now runs through hostjit with its scratch", "[cuda][triton]") {
  if (std::system((python() + " -c 'import triton, torch' > /dev/null 2>&1").c_str()) != 0) {
    WARN("SKIPPED: " + python() + " cannot import triton and torch (set HOSTJIT_PYTHON): no Triton kernel was tried");
    return;
  }
  std::string cache = (std::filesystem::temp_directory_path() / "hostjit_gpu_triton_cache").string();
  std::filesystem::remove_all(cache);
  auto entry = output(python() + " " + sourceDir() + "/test/gpu/triton/row_normalize.py " + cache);
  REQUIRE(entry);
  auto k = readTritonKernel(*entry);
  INFO((k ? "" : k.error().message));
  REQUIRE(k);
  CHECK(k->name == "row_normalize");
  REQUIRE(k->params.size() == 3 + k->hidden);
  CHECK(k->hidden == 2);  // Triton 3's global and profile scratch
  WARN("Triton " + k->version + ": block " + std::to_string(k->blockThreads()) + ", smem " +
       std::to_string(k->shared) + ", scratch " + std::to_string(k->globalScratchSize) + " and " +
       std::to_string(k->profileScratchSize) + " bytes per program");

  auto rt = cudaRuntime(/*checkZeroed=*/1);
  const int64_t rows = 37, cols = 1000;
  std::mt19937 gen(11);
  std::uniform_real_distribution<float> u(0.5f, 1.5f);
  std::vector<float> xs(rows * cols);
  for (float &f : xs) f = u(gen);
  auto x = Tensor::fromHost(rt, {rows, cols}, xs);
  REQUIRE(x);
  DLTensor xd = x->dl();
  const DLTensor *inputs[] = {&xd};
  std::filesystem::path dir(*entry);
  for (const char *ext : {".cubin", ".ptx"}) {
    std::string image = (dir / ("row_normalize" + std::string(ext))).string();
    REQUIRE(std::filesystem::exists(image));
    Diagnostics d;
    std::string text = program(*k, image);
    Program p = parse(text, "row_normalize.hir", d);
    INFO(text);
    INFO(d.format("row_normalize.hir", p.source));
    REQUIRE(d.empty());
    for (bool useJit : {false, true})
      for (bool graph : {false, true}) {
        INFO(ext << (useJit ? " jit" : " eval") << (graph ? ", graph" : ""));
        Runner r(p, rt, useJit, graph);
        for (int call = 0; call < 2; ++call) {
          auto out = r.run(inputs);
          INFO((out ? "" : out.error().message));
          REQUIRE(out);
          auto host = (*out)[0].toHost();
          REQUIRE(host);
          const float *v = reinterpret_cast<const float *>(host->data());
          double worst = 0;
          for (int64_t row = 0; row < rows; ++row) {
            double sum = 0;
            for (int64_t c = 0; c < cols; ++c) sum += xs[row * cols + c];
            for (int64_t c = 0; c < cols; ++c)
              worst = std::max(worst, std::fabs(v[row * cols + c] - xs[row * cols + c] / sum) /
                                          (xs[row * cols + c] / sum));
          }
          CHECK(worst < 1e-5);  // f32 sums of 1000 values in another order
        }
      }
  }
}
