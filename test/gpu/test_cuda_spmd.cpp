// test_cuda_spmd.cpp - SPMD programs on two GPUs through NCCL: one thread
// per rank, each with a context on its own device. Skipped (with the reason)
// on a machine with one GPU or without NCCL.
#define CATCH_CONFIG_EXTERNAL_INTERFACES
#include <catch2/catch.hpp>

#include <cstring>
#include <thread>

#include "gpu_helpers.h"
#include "hostjit/exec/evaluator.h"
#include "hostjit/exec/host_data.h"

using namespace hostjit;
using namespace hostjit::gputest;

namespace {

const std::string kSpmd = sourceDir() + "/test/programs/spmd/";

int deviceCount() {
  int count = 0;
  for (int d = 0; d < 8; ++d) {
    hj_options o;
    hj_options_init(&o);
    o.backend = HJ_BACKEND_CUDA;
    o.device = d;
    hj_context *ctx = nullptr;
    if (hj_context_create(&o, &ctx) != HJ_OK) break;
    hj_context_destroy(ctx);
    ++count;
  }
  return count;
}

// Two CUDA devices and NCCL, or a warning saying which is missing.
bool twoGpusWithNccl() {
  if (deviceCount() < 2) {
    WARN("skipped: this machine has fewer than 2 CUDA devices");
    return false;
  }
  hj_comm_id probe;
  if (hj_comm_unique_id(HJ_BACKEND_CUDA, &probe) != HJ_OK) {
    WARN(std::string("skipped: ") + hj_last_error());
    return false;
  }
  return true;
}

struct RankOut {
  std::vector<std::vector<float>> outputs;  // the last call's
  std::string error;
  hj_stats stats{};
};

// Runs `p` `calls` times on 2 ranks (device r for rank r), eagerly or in
// graph mode; data(r) gives rank r's inputs.
std::vector<RankOut> runTwo(const Program &p, bool jitPath, const std::vector<std::vector<int64_t>> &shapes,
                            const std::function<std::vector<std::vector<float>>(int)> &data, bool graph = false,
                            int calls = 1, const std::vector<ScalarArg> &scalars = {}) {
  hj_comm_id id;
  REQUIRE(hj_comm_unique_id(HJ_BACKEND_CUDA, &id) == HJ_OK);
  std::vector<std::shared_ptr<Runtime>> rts(2);
  std::vector<std::unique_ptr<CompiledProgram>> cps(2);
  std::vector<std::optional<Evaluator>> evs(2);
  for (int r = 0; r < 2; ++r) {
    hj_options o;
    hj_options_init(&o);
    o.backend = HJ_BACKEND_CUDA;
    o.device = r;
    auto rt = Runtime::create(o);
    REQUIRE(rt);
    rts[r] = *rt;
    if (jitPath) {
      CompileOptions co;
      co.useCache = false;
      co.tiered = false;
      auto c = jit().compile(p, rts[r], co);
      INFO((c ? "" : c.error().message));
      REQUIRE(c);
      cps[r] = std::move(*c);
      cps[r]->setGraphMode(graph);
    } else {
      auto e = Evaluator::create(p, rts[r]);
      REQUIRE(e);
      evs[r].emplace(std::move(*e));
      evs[r]->setGraphMode(graph);
    }
  }
  std::vector<RankOut> out(2);
  std::vector<std::thread> threads;
  for (int r = 0; r < 2; ++r)
    threads.emplace_back([&, r] {
      hj_context *ctx = rts[r]->context();
      if (hj_comm_init(ctx, &id, 2, r) != HJ_OK) {
        out[r].error = hj_last_error();
        return;
      }
      const Plan &plan = jitPath ? cps[r]->plan() : evs[r]->plan();
      std::vector<std::vector<unsigned char>> bytes;
      for (const std::vector<float> &v : data(r)) {
        bytes.emplace_back(v.size() * sizeof(float));
        std::memcpy(bytes.back().data(), v.data(), bytes.back().size());
      }
      auto in = InputSet::fromHost(rts[r], plan, shapes, bytes);
      if (!in) {
        out[r].error = in.error().message;
        return;
      }
      for (int call = 0; call < calls; ++call) {
        auto res = jitPath ? cps[r]->run(in->span(), scalars) : evs[r]->run(in->span(), scalars);
        if (!res) {
          out[r].error = res.error().message;
          hj_comm_abort(ctx, out[r].error.c_str());
          return;
        }
        out[r].outputs.clear();
        for (const Tensor &t : *res) {
          auto h = t.toHost();
          if (!h) {
            out[r].error = h.error().message;
            return;
          }
          out[r].outputs.emplace_back(h->size() / sizeof(float));
          std::memcpy(out[r].outputs.back().data(), h->data(), h->size());
        }
      }
      hj_synchronize(ctx);
      out[r].stats = rts[r]->stats();
    });
  for (std::thread &t : threads) t.join();
  return out;
}

}  // namespace

TEST_CASE("spmd on two GPUs: every collective through NCCL, evaluator and JIT", "[cuda][spmd]") {
  if (!twoGpusWithNccl()) return;
  Program p = load(kSpmd + "collectives.hir");
  const int64_t n = 1000;
  auto a = [](int r, int64_t i) { return static_cast<float>(r * 1000 + i + 1); };
  for (bool jitPath : {false, true}) {
    auto out = runTwo(p, jitPath, {{n}}, [&](int) { return std::vector<std::vector<float>>{std::vector<float>(n, 1)}; });
    for (int r = 0; r < 2; ++r) {
      INFO((jitPath ? "jit" : "eval") << ", rank " << r << ": " << out[r].error);
      REQUIRE(out[r].error == "");
      const auto &o = out[r].outputs;
      REQUIRE(o.size() == 6);
      bool ok = true;
      for (int64_t i = 0; i < n; ++i) {
        ok &= o[0][i] == a(0, i) + a(1, i);
        ok &= o[1][i] == a(1, i);
        ok &= o[2][i] == a(0, i) && o[2][n + i] == a(1, i);
        ok &= o[3][i] == 2 * a(r, i);
        ok &= o[4][i] == a(1, i);
        ok &= o[5][i] == a(1 - r, i);
      }
      CHECK(ok);
    }
  }
}

TEST_CASE("spmd on two GPUs: row-parallel linear and the chunked all-gather + matmul", "[cuda][spmd]") {
  if (!twoGpusWithNccl()) return;
  auto whole = [](size_t n, int seed) {
    std::vector<float> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = static_cast<float>(1 + (i * 7 + static_cast<size_t>(seed) * 13) % 5);
    return v;
  };
  const int64_t m = 64, k = 32, n = 16, kr = k / 2;
  std::vector<float> x = whole(m * k, 1), w = whole(k * n, 2);
  std::vector<float> y(m * n, 0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      for (int64_t t = 0; t < k; ++t) y[i * n + j] += x[i * k + t] * w[t * n + j];
  Program rp = load(kSpmd + "row_parallel.hir");
  auto out = runTwo(rp, true, {{m, kr}, {kr, n}}, [&](int r) {
    std::vector<float> xs(m * kr), ws(kr * n);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < kr; ++j) xs[i * kr + j] = x[i * k + r * kr + j];
    for (int64_t j = 0; j < kr; ++j)
      for (int64_t c = 0; c < n; ++c) ws[j * n + c] = w[(r * kr + j) * n + c];
    return std::vector<std::vector<float>>{xs, ws};
  });
  for (int r = 0; r < 2; ++r) {
    INFO("row parallel, rank " << r << ": " << out[r].error);
    REQUIRE(out[r].error == "");
    CHECK(out[r].outputs[0] == y);
  }
}

TEST_CASE("spmd on two GPUs: graph mode, NCCL calls captured as nodes and streams as branches, equal to eager",
          "[cuda][spmd][graph]") {
  if (!twoGpusWithNccl()) return;
  Program coll = load(kSpmd + "collectives.hir");
  const int64_t n = 1000;
  auto ones = [&](int) { return std::vector<std::vector<float>>{std::vector<float>(n, 1)}; };
  for (bool jitPath : {false, true}) {
    auto eager = runTwo(coll, jitPath, {{n}}, ones);
    auto graph = runTwo(coll, jitPath, {{n}}, ones, true, 4);
    for (int r = 0; r < 2; ++r) {
      INFO((jitPath ? "jit" : "eval") << ", rank " << r << ": " << eager[r].error << graph[r].error);
      REQUIRE(eager[r].error == "");
      REQUIRE(graph[r].error == "");
      CHECK(graph[r].outputs == eager[r].outputs);
      CHECK(graph[r].stats.graph_builds == 1);
      CHECK(graph[r].stats.graph_fallbacks == 0);
      CHECK(graph[r].stats.graph_replays == 4);
      CHECK(graph[r].stats.collectives == 4 * 7);
    }
  }
  Program gm = load(kSpmd + "gather_matmul.hir");
  auto whole = [](size_t count, int seed) {
    std::vector<float> v(count);
    for (size_t i = 0; i < count; ++i) v[i] = static_cast<float>(1 + (i * 7 + static_cast<size_t>(seed) * 13) % 5);
    return v;
  };
  const int64_t m = 96, k = 64, c = 8;
  std::vector<float> w = whole(k * c, 3);
  auto data = [&](int r) { return std::vector<std::vector<float>>{whole(m * k, 10 + r), w}; };
  std::vector<ScalarArg> chunks{ScalarArg::i64(4)};
  auto eager = runTwo(gm, true, {{m, k}, {k, c}}, data, false, 1, chunks);
  auto graph = runTwo(gm, true, {{m, k}, {k, c}}, data, true, 5, chunks);
  for (int r = 0; r < 2; ++r) {
    INFO("gather + matmul, rank " << r << ": " << eager[r].error << graph[r].error);
    REQUIRE(eager[r].error == "");
    REQUIRE(graph[r].error == "");
    CHECK(graph[r].outputs == eager[r].outputs);
    CHECK(graph[r].stats.graph_builds == 1);
    CHECK(graph[r].stats.graph_fast == 4);
  }
}
