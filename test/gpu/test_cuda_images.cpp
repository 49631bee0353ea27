// test_cuda_images.cpp - compiled kernel images on the GPU: the committed
// cubin, fatbin and PTX of test/images, the same built by nvcc while the
// test runs, an image beside a CUDA source in one program, and the errors
// for an image without code for the device and for PTX the driver refuses.
#define CATCH_CONFIG_EXTERNAL_INTERFACES
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>

#include "hostjit/exec/evaluator.h"
#include "hostjit/exec/host_data.h"
#include "hostjit/jit.h"
#include "hostjit/text/text.h"
#include "gpu_helpers.h"

using namespace hostjit;
using namespace hostjit::gputest;

namespace {

const std::string kImages = sourceDir() + "/test/images";

// y = a * x + 1 through @scale_add from `image`, then z = 2 * y through a
// CUDA source, so an image and a source share one program.
std::string program(const std::string &image, const std::string &source) {
  return "kernel @scale_add(ptr<f32>, ptr<f32>, i64, f32) {\n  entry = \"scale_add\"\n  image = \"" + image +
         "\"\n}\n\nkernel @twice(ptr<f32>, ptr<f32>, i64) {\n  cuda = \"" + source +
         "\"\n  entry = \"twice\"\n}\n\n"
         "func @main(%x: f32[?], %a: f32) -> (f32[?], f32[?]) {\n  %n = size %x, 0\n  %b = ceildiv %n, 128\n"
         "  %y = alloc f32[%n]\n  launch @scale_add grid(%b, 1, 1) block(128, 1, 1) smem(0) (%x, %y, %n, %a)\n"
         "  %z = alloc f32[%n]\n  launch @twice grid(%b, 1, 1) block(128, 1, 1) smem(0) (%y, %z, %n)\n"
         "  return %y, %z\n}\n";
}

std::string twiceSource() {
  std::string path = (std::filesystem::temp_directory_path() / "hostjit_gpu_twice.cu").string();
  std::ofstream(path) << "extern \"C\" __global__ void twice(const float *y, float *z, long long n) {\n"
                         "  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;\n"
                         "  if (i < n) z[i] = 2.0f * y[i];\n}\n";
  return path;
}

// The nvcc to build images with while the test runs, if there is one.
std::optional<std::string> findNvcc() {
  for (const char *c : {static_cast<const char *>(std::getenv("HOSTJIT_NVCC")), "/usr/local/cuda/bin/nvcc"})
    if (c && *c && std::filesystem::exists(c)) return std::string(c);
  if (std::system("command -v nvcc > /dev/null 2>&1") == 0) return std::string("nvcc");
  return std::nullopt;
}

// Runs the program on x = 0.25 + i/64 with a = 1.5 through the evaluator
// and the JIT, and checks y against a * x + 1 (fused or not) and z = 2y.
void checkRuns(const std::string &image) {
  INFO(image);
  Program p = parseText(program(image, twiceSource()), "images.hir");
  auto rt = cudaRuntime();
  const int64_t n = 1000;
  std::vector<float> xs(n);
  for (int64_t i = 0; i < n; ++i) xs[i] = 0.25f + static_cast<float>(i) / 64;
  auto x = Tensor::fromHost(rt, {n}, xs);
  REQUIRE(x);
  DLTensor xd = x->dl();
  const DLTensor *inputs[] = {&xd};
  ScalarArg scalars[] = {ScalarArg::f32(1.5f)};
  for (bool useJit : {false, true}) {
    INFO((useJit ? "jit" : "eval"));
    Runner runner(p, rt, useJit);
    auto out = runner.run(inputs, scalars);
    REQUIRE(out);
    auto y = (*out)[0].toHost(), z = (*out)[1].toHost();
    REQUIRE(y);
    REQUIRE(z);
    const float *yv = reinterpret_cast<const float *>(y->data()), *zv = reinterpret_cast<const float *>(z->data());
    int bad = 0;
    for (int64_t i = 0; i < n; ++i) {
      float fused = std::fmaf(1.5f, xs[i], 1.0f), plain = 1.5f * xs[i] + 1.0f;
      bad += !(yv[i] == fused || yv[i] == plain) || zv[i] != 2.0f * yv[i];
    }
    CHECK(bad == 0);
  }
}

std::string loadError(const std::string &image) {
  Program p = parseText(program(image, twiceSource()), "images.hir");
  auto rt = cudaRuntime();
  auto ev = Evaluator::create(p, rt);
  REQUIRE(!ev);
  return ev.error().message;
}

}  // namespace

TEST_CASE("compiled images: the committed cubin, fatbin and PTX run beside a CUDA source", "[cuda][image]") {
  for (const char *name : {"scale_add.sm_90.cubin", "scale_add.fatbin", "scale_add.compute_90.ptx"})
    checkRuns(kImages + "/" + name);
}

TEST_CASE("compiled images: a PTX and a fatbin built by nvcc now run", "[cuda][image]") {
  auto nvcc = findNvcc();
  if (!nvcc) {
    WARN("SKIPPED: no nvcc here (set HOSTJIT_NVCC): the images built at test time were not tried");
    return;
  }
  std::string dir = (std::filesystem::temp_directory_path() / "hostjit_gpu_images").string();
  std::filesystem::create_directories(dir);
  std::string src = kImages + "/scale_add.cu";
  std::string ptx = dir + "/now.ptx", fat = dir + "/now.fatbin";
  REQUIRE(std::system((*nvcc + " -ptx -arch=compute_80 " + src + " -o " + ptx).c_str()) == 0);
  REQUIRE(std::system((*nvcc + " -fatbin -gencode arch=compute_90,code=sm_90 -gencode arch=compute_80,code=compute_80 " +
                       src + " -o " + fat)
                          .c_str()) == 0);
  checkRuns(ptx);
  checkRuns(fat);
}

TEST_CASE("compiled images: no code for the device, and PTX the driver refuses, are named", "[cuda][image]") {
  std::string msg = loadError(kImages + "/scale_add.sm_80.cubin");
  INFO(msg);
  CHECK(msg.find("kernel @scale_add: the cubin " + kImages + "/scale_add.sm_80.cubin has no code for CUDA device") !=
        std::string::npos);
  CHECK(msg.find("it holds sm_80") != std::string::npos);
  std::string bad = (std::filesystem::temp_directory_path() / "hostjit_gpu_bad.ptx").string();
  std::ofstream(bad) << ".version 8.0\n.target sm_90\n.address_size 64\n"
                        ".visible .entry scale_add(.param .u64 x)\n{\n  bogus.instruction %r1;\n}\n";
  msg = loadError(bad);
  INFO(msg);
  CHECK(msg.find("kernel @scale_add: the driver did not compile the PTX " + bad + " for sm_") != std::string::npos);
  CHECK(msg.find("bogus") != std::string::npos);  // the driver's log
}
