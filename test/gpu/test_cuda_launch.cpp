// test_cuda_launch.cpp - launch attributes on the GPU: a cooperative kernel
// that meets at a grid-wide barrier, thread-block clusters, programmatic
// dependent launch; in the evaluator, the JIT and graph mode, and the
// errors for a grid that cannot be co-resident or is no multiple of the
// cluster (test/gpu/programs).
#define CATCH_CONFIG_EXTERNAL_INTERFACES
#include <catch2/catch.hpp>

#include <cmath>
#include <random>

#include "gpu_helpers.h"
#include "hostjit/exec/host_data.h"

using namespace hostjit;
using namespace hostjit::gputest;

namespace {

const std::string kPrograms = sourceDir() + "/test/gpu/programs";

std::vector<float> randomFloats(int64_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> u(0.5f, 1.5f);
  std::vector<float> v(n);
  for (float &f : v) f = u(gen);
  return v;
}

}  // namespace

TEST_CASE("launch attributes on the GPU: a cooperative grid meets at its barrier, eager and graph",
          "[cuda][launch]") {
  Program p = load(kPrograms + "/grid_barrier.hir");
  auto rt = cudaRuntime(/*checkZeroed=*/1);  // the barrier's counters must be left zero
  const int64_t n = int64_t(1) << 20;
  std::vector<float> xs = randomFloats(n, 7);
  double want = 0;
  for (float f : xs) want += f;
  auto x = Tensor::fromHost(rt, {n}, xs);
  REQUIRE(x);
  DLTensor xd = x->dl();
  const DLTensor *inputs[] = {&xd};
  eachPath([&](bool useJit, bool graph) {
    Runner r(p, rt, useJit, graph);
    for (int64_t blocks : {132, 264, 264, 528}) {
      INFO("blocks " << blocks);
      ScalarArg scalars[] = {ScalarArg::i64(blocks)};
      auto out = r.run(inputs, scalars);
      INFO((out ? "" : out.error().message));
      REQUIRE(out);
      auto host = (*out)[0].toHost();
      REQUIRE(host);
      const float *v = reinterpret_cast<const float *>(host->data());
      int bad = 0;
      for (int64_t b = 0; b < blocks; ++b) bad += std::fabs(v[b] - want) > 1e-4 * want || v[b] != v[0];
      CHECK(bad == 0);
    }
  });
}

TEST_CASE("launch attributes on the GPU: a cooperative grid too large to be co-resident fails, naming the most",
          "[cuda][launch]") {
  Program p = load(kPrograms + "/grid_barrier.hir");
  auto rt = cudaRuntime();
  std::vector<float> xs = randomFloats(4096, 8);
  auto x = Tensor::fromHost(rt, {4096}, xs);
  REQUIRE(x);
  DLTensor xd = x->dl();
  const DLTensor *inputs[] = {&xd};
  eachPath([&](bool useJit, bool graph) {
    Runner r(p, rt, useJit, graph);
    ScalarArg scalars[] = {ScalarArg::i64(100000)};
    auto out = r.run(inputs, scalars);
    REQUIRE(!out);
    const std::string &msg = out.error().message;
    WARN(msg);
    CHECK(msg.find("cooperative launch of @coop_sum grid(100000, 1, 1) block(256, 1, 1) smem(0): 100000 blocks "
                   "cannot all be resident on CUDA device 0, which holds at most ") != std::string::npos);
    CHECK(msg.find("a grid-wide barrier would never complete") != std::string::npos);
    // The context is still usable: the launch never reached the device.
    ScalarArg fits[] = {ScalarArg::i64(132)};
    auto again = r.run(inputs, fits);
    INFO((again ? "" : again.error().message));
    CHECK(again);
  });
}

TEST_CASE("launch attributes on the GPU: blocks launched in clusters see their cluster, eager and graph",
          "[cuda][launch]") {
  Program p = load(kPrograms + "/cluster_rank.hir");
  auto rt = cudaRuntime();
  eachPath([&](bool useJit, bool graph) {
    Runner r(p, rt, useJit, graph);
    for (int64_t blocks : {8, 8, 264}) {
      ScalarArg scalars[] = {ScalarArg::i64(blocks)};
      auto out = r.run({}, scalars);
      INFO((out ? "" : out.error().message));
      REQUIRE(out);
      auto host = (*out)[0].toHost();
      REQUIRE(host);
      const int32_t *v = reinterpret_cast<const int32_t *>(host->data());
      int bad = 0;
      for (int64_t b = 0; b < blocks; ++b) bad += v[b] != int32_t(b % 2 + 200);
      CHECK(bad == 0);
    }
    ScalarArg odd[] = {ScalarArg::i64(7)};
    auto out = r.run({}, odd);
    REQUIRE(!out);
    CHECK(out.error().message.find("launch of @cluster_rank grid(7, 1, 1): grid.x is not a multiple of the "
                                   "kernel's cluster(2, 1, 1)") != std::string::npos);
  });
}

TEST_CASE("launch attributes on the GPU: a programmatic dependent launch waits for its producer, eager and graph",
          "[cuda][launch]") {
  Program p = load(kPrograms + "/pdl.hir");
  auto rt = cudaRuntime();
  const int64_t n = int64_t(1) << 22;
  std::vector<float> xs = randomFloats(n, 9);
  auto x = Tensor::fromHost(rt, {n}, xs);
  REQUIRE(x);
  DLTensor xd = x->dl();
  const DLTensor *inputs[] = {&xd};
  eachPath([&](bool useJit, bool graph) {
    Runner r(p, rt, useJit, graph);
    for (int call = 0; call < 3; ++call) {
      auto out = r.run(inputs);
      INFO((out ? "" : out.error().message));
      REQUIRE(out);
      auto host = (*out)[0].toHost();
      REQUIRE(host);
      const float *z = reinterpret_cast<const float *>(host->data());
      int64_t bad = 0;
      for (int64_t i = 0; i < n; ++i) bad += z[i] != 2.0f * xs[i] + 1.0f;
      CHECK(bad == 0);
    }
  });
}
