// test_spmd.cpp - SPMD programs on 4 host ranks (threads of this process,
// each with its own context, joined by a communicator): every collective,
// a row-parallel linear layer against the one-rank result, the chunked
// all-gather + matmul with and without its second stream, evaluator/JIT
// parity per rank, a failure on one rank that the others report, and all of
// it as graphs (graph mode).
#include "helpers.h"

#include <cstring>
#include <functional>
#include <thread>

#include "hostjit/exec/parity.h"

using namespace hostjit;
using namespace hostjit::test;

namespace {

const std::string kSpmd = std::string(HOSTJIT_SOURCE_DIR) + "/test/programs/spmd/";

// One rank's result: its outputs as floats, its record and its error.
struct RankRun {
  std::vector<std::vector<float>> outputs;
  std::vector<std::string> record;
  std::string error;
  hj_stats stats{};
  uint64_t callOps = 0;  // fallible operations of the call itself
};

// Host data of a rank's tensor inputs: small whole numbers, never zero, so
// float sums are exact whatever their order.
using MakeInputs = std::function<std::vector<std::vector<float>>(int rank)>;

// Runs `p` on `world` ranks (threads), evaluator or JIT, eagerly or in graph
// mode, `calls` times, with the given shapes and data per rank; failAt > 0
// injects a failure at that operation of rank `failRank`'s first call. The
// record is the first call's; the outputs are the last call's.
std::vector<RankRun> runRanks(const Program &p, int world, bool jit, const std::vector<std::vector<int64_t>> &shapes,
                              const MakeInputs &data, const std::vector<ScalarArg> &scalars = {},
                              uint64_t failAt = 0, int failRank = 0, bool graph = false, int calls = 1) {
  hj_comm_id id;
  REQUIRE(hj_comm_unique_id(HJ_BACKEND_HOST, &id) == HJ_OK);
  std::vector<RankRun> runs(world);
  std::vector<std::unique_ptr<Runner>> runners(world);
  std::vector<std::shared_ptr<Runtime>> rts(world);
  for (int r = 0; r < world; ++r) {  // Catch's macros are not thread safe: set up here
    rts[r] = makeRuntime();
    runners[r] = std::make_unique<Runner>(p, rts[r], jit, OptLevel::O2, graph);
  }
  std::vector<std::thread> threads;
  for (int r = 0; r < world; ++r)
    threads.emplace_back([&, r] {
      RankRun &out = runs[r];
      hj_context *ctx = rts[r]->context();
      if (hj_comm_init(ctx, &id, world, r) != HJ_OK) {
        out.error = hj_last_error();
        return;
      }
      std::vector<std::vector<unsigned char>> bytes;
      for (const std::vector<float> &v : data(r)) {
        bytes.emplace_back(v.size() * sizeof(float));
        std::memcpy(bytes.back().data(), v.data(), bytes.back().size());
      }
      auto in = InputSet::fromHost(rts[r], runners[r]->plan(), shapes, bytes);
      if (!in) {
        out.error = in.error().message;
        return;
      }
      for (int call = 0; call < calls && out.error.empty(); ++call) {
        hj_record_enable(ctx, call == 0 ? 1 : 0);  // recorded graph-mode calls never replay fast
        if (failAt && r == failRank && call == 0) hj_inject_failure(ctx, failAt);
        uint64_t before = rts[r]->stats().fallible_ops;
        auto res = runners[r]->run(in->span(), scalars);
        if (call == 0) {
          out.callOps = rts[r]->stats().fallible_ops - before;
          out.record = rts[r]->recordLines();
        }
        out.outputs.clear();
        if (!res) {
          out.error = res.error().message;
          hj_comm_abort(ctx, out.error.c_str());  // as a real caller does: the others must not wait
        } else {
          for (const Tensor &t : *res) {
            auto h = t.toHost();
            if (!h) continue;
            out.outputs.emplace_back(h->size() / sizeof(float));
            std::memcpy(out.outputs.back().data(), h->data(), h->size());
          }
        }
      }  // the outputs are freed here
      hj_synchronize(ctx);
      out.stats = rts[r]->stats();
    });
  for (std::thread &t : threads) t.join();
  return runs;
}

std::vector<float> wholeNumbers(size_t n, int seed) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<float>(1 + (i * 7 + static_cast<size_t>(seed) * 13) % 5);
  return v;
}

}  // namespace

TEST_CASE("spmd: every collective on 4 ranks, evaluator and JIT in parity", "[spmd]") {
  Program p = parseOk(readFile(kSpmd + "collectives.hir"), "collectives.hir");
  constexpr int kWorld = 4;
  const int64_t n = 3;
  auto a = [](int r, int64_t i) { return static_cast<float>(r * 1000 + i + 1); };
  std::vector<RankRun> eval = runRanks(p, kWorld, false, {{n}}, [&](int) { return std::vector<std::vector<float>>{std::vector<float>(n, 1)}; });
  std::vector<RankRun> jit = runRanks(p, kWorld, true, {{n}}, [&](int) { return std::vector<std::vector<float>>{std::vector<float>(n, 1)}; });
  for (int r = 0; r < kWorld; ++r) {
    INFO("rank " << r);
    REQUIRE(eval[r].error == "");
    REQUIRE(jit[r].error == "");
    const auto &o = eval[r].outputs;
    REQUIRE(o.size() == 6);
    for (int64_t i = 0; i < n; ++i) {
      float sum = 0, max = 0;
      for (int k = 0; k < kWorld; ++k) sum += a(k, i), max = std::max(max, a(k, i));
      CHECK(o[0][i] == sum);                                   // all_reduce sum
      CHECK(o[1][i] == max);                                   // all_reduce max
      for (int k = 0; k < kWorld; ++k) CHECK(o[2][k * n + i] == a(k, i));  // all_gather, in rank order
      CHECK(o[3][i] == kWorld * a(r, i));                      // reduce_scatter of identical gathers
      CHECK(o[4][i] == a(kWorld - 1, i));                      // broadcast from the last rank
      CHECK(o[5][i] == a((r + kWorld - 1) % kWorld, i));       // the ring: from the previous rank
    }
    CHECK(jit[r].outputs == eval[r].outputs);
    CHECK(!compareRecords(eval[r].record, jit[r].record));
    CHECK(eval[r].stats.collectives == 7);
    CHECK(eval[r].stats.live_bytes == 0);
  }
  // The record names each collective; a send and a receive form one group.
  CHECK(std::find(eval[0].record.begin(), eval[0].record.end(), "all_reduce sum f32 bytes=12") != eval[0].record.end());
  CHECK(std::find(eval[0].record.begin(), eval[0].record.end(), "recv f32 bytes=12 peer 3") != eval[0].record.end());
}

TEST_CASE("spmd: a row-parallel linear layer on 4 ranks equals the one-rank product", "[spmd]") {
  Program p = parseOk(readFile(kSpmd + "row_parallel.hir"), "row_parallel.hir");
  constexpr int kWorld = 4;
  const int64_t m = 5, k = 8, n = 3, kr = k / kWorld;
  std::vector<float> x = wholeNumbers(m * k, 1), w = wholeNumbers(k * n, 2);
  // Rank r: columns [r * kr, (r + 1) * kr) of x, the same rows of w.
  auto shard = [&](int r) {
    std::vector<float> xs(m * kr), ws(kr * n);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < kr; ++j) xs[i * kr + j] = x[i * k + r * kr + j];
    for (int64_t j = 0; j < kr; ++j)
      for (int64_t c = 0; c < n; ++c) ws[j * n + c] = w[(r * kr + j) * n + c];
    return std::vector<std::vector<float>>{xs, ws};
  };
  std::vector<RankRun> one = runRanks(p, 1, true, {{m, k}, {k, n}}, [&](int) { return std::vector<std::vector<float>>{x, w}; });
  REQUIRE(one[0].error == "");
  for (bool jit : {false, true}) {
    std::vector<RankRun> four = runRanks(p, kWorld, jit, {{m, kr}, {kr, n}}, shard);
    for (int r = 0; r < kWorld; ++r) {
      INFO((jit ? "jit" : "eval") << ", rank " << r);
      REQUIRE(four[r].error == "");
      CHECK(four[r].outputs == one[0].outputs);
    }
  }
}

TEST_CASE("spmd: the chunked all-gather and matmul gives the same result on one stream or two", "[spmd][streams]") {
  Program p = parseOk(readFile(kSpmd + "gather_matmul.hir"), "gather_matmul.hir");
  // The serial baseline: the same statements without the comm stream.
  std::string serialText = readFile(kSpmd + "gather_matmul.hir");
  for (const char *cut : {"  on %comm {\n    wait %ready\n  }\n"}) {
    size_t at = serialText.find(cut);
    REQUIRE(at != std::string::npos);
    serialText.erase(at, std::strlen(cut));
  }
  size_t on = serialText.find("    on %comm {\n");
  REQUIRE(on != std::string::npos);
  serialText.erase(on, std::strlen("    on %comm {\n"));
  size_t close = serialText.find("      %gathered = record\n    }\n");
  REQUIRE(close != std::string::npos);
  serialText.replace(close, std::strlen("      %gathered = record\n    }\n"), "      %gathered = record\n");
  Program serial = parseOk(serialText, "gather_matmul_serial.hir");
  constexpr int kWorld = 4;
  const int64_t rows = 2, chunks = 3, m = rows * chunks, k = 4, n = 5;
  std::vector<float> w = wholeNumbers(k * n, 9);
  auto data = [&](int r) { return std::vector<std::vector<float>>{wholeNumbers(m * k, 20 + r), w}; };
  ScalarArg c = ScalarArg::i64(chunks);
  // The expected product: the ranks' x stacked in rank order, times w.
  std::vector<float> expect(kWorld * m * n, 0);
  for (int r = 0; r < kWorld; ++r) {
    std::vector<float> x = data(r)[0];
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        float acc = 0;
        for (int64_t t = 0; t < k; ++t) acc += x[i * k + t] * w[t * n + j];
        expect[(r * m + i) * n + j] = acc;
      }
  }
  for (bool jit : {false, true}) {
    std::vector<RankRun> two = runRanks(p, kWorld, jit, {{m, k}, {k, n}}, data, {c});
    std::vector<RankRun> one = runRanks(serial, kWorld, jit, {{m, k}, {k, n}}, data, {c});
    for (int r = 0; r < kWorld; ++r) {
      INFO((jit ? "jit" : "eval") << ", rank " << r);
      REQUIRE(two[r].error == "");
      REQUIRE(one[r].error == "");
      CHECK(two[r].outputs[0] == expect);
      CHECK(one[r].outputs[0] == expect);
      CHECK(two[r].stats.collectives == chunks);
      CHECK(two[r].stats.deferred_frees >= chunks);  // %g was used on the comm stream
      CHECK(two[r].stats.live_bytes == 0);
    }
  }
}

TEST_CASE("spmd: graph mode: a rank's program is one graph whose nodes include its collectives, replayed fast",
          "[spmd][graph]") {
  constexpr int kWorld = 4;
  Program coll = parseOk(readFile(kSpmd + "collectives.hir"), "collectives.hir");
  auto ones = [](int) { return std::vector<std::vector<float>>{std::vector<float>(3, 1)}; };
  for (bool jit : {false, true}) {
    std::vector<RankRun> eager = runRanks(coll, kWorld, jit, {{3}}, ones);
    std::vector<RankRun> graph = runRanks(coll, kWorld, jit, {{3}}, ones, {}, 0, 0, true, 4);
    for (int r = 0; r < kWorld; ++r) {
      INFO((jit ? "jit" : "eval") << ", rank " << r);
      REQUIRE(eager[r].error == "");
      REQUIRE(graph[r].error == "");
      CHECK(graph[r].outputs == eager[r].outputs);
      auto diff = compareRecords(eager[r].record, graph[r].record, "eager", "graph");
      INFO((diff ? *diff : ""));
      CHECK(!diff);
      CHECK(graph[r].stats.graph_builds == 1);
      CHECK(graph[r].stats.graph_fast == 3);
      CHECK(graph[r].stats.graph_fallbacks == 0);
      CHECK(graph[r].stats.collectives == 4 * 7);
      CHECK(graph[r].stats.collective_bytes == 4 * eager[r].stats.collective_bytes);
      CHECK(graph[r].stats.live_bytes == 0);
    }
  }
  // The chunked all-gather + matmul: its two streams are branches of the
  // graph, which HOSTJIT_GRAPH_SHUFFLE runs in random orders.
  Program gm = parseOk(readFile(kSpmd + "gather_matmul.hir"), "gather_matmul.hir");
  const int64_t m = 6, k = 4, n = 5;
  std::vector<float> w = wholeNumbers(k * n, 9);
  auto data = [&](int r) { return std::vector<std::vector<float>>{wholeNumbers(m * k, 20 + r), w}; };
  ScalarArg chunks = ScalarArg::i64(3);
  std::vector<RankRun> eager = runRanks(gm, kWorld, true, {{m, k}, {k, n}}, data, {chunks});
  for (int seed = 1; seed <= 4; ++seed) {
    setenv("HOSTJIT_GRAPH_SHUFFLE", std::to_string(seed).c_str(), 1);
    std::vector<RankRun> graph = runRanks(gm, kWorld, true, {{m, k}, {k, n}}, data, {chunks}, 0, 0, true, 3);
    unsetenv("HOSTJIT_GRAPH_SHUFFLE");
    for (int r = 0; r < kWorld; ++r) {
      INFO("HOSTJIT_GRAPH_SHUFFLE=" << seed << ", rank " << r);
      REQUIRE(eager[r].error == "");
      REQUIRE(graph[r].error == "");
      CHECK(graph[r].outputs == eager[r].outputs);
      CHECK(graph[r].stats.graph_builds == 1);
      CHECK(graph[r].stats.graph_fast == 2);
      CHECK(graph[r].stats.live_bytes == 0);
    }
  }
}

TEST_CASE("spmd: graph mode: a failure at every operation of rank 0 leaks nothing and stops the others",
          "[spmd][graph][injection]") {
  Program p = parseOk(readFile(kSpmd + "collectives.hir"), "collectives.hir");
  constexpr int kWorld = 2;
  auto data = [](int) { return std::vector<std::vector<float>>{std::vector<float>(4, 1)}; };
  std::vector<RankRun> clean = runRanks(p, kWorld, true, {{4}}, data, {}, 0, 0, true, 1);
  REQUIRE(clean[0].error == "");
  uint64_t ops = clean[0].callOps;
  REQUIRE(ops > 7);
  for (uint64_t n = 1; n <= ops; ++n) {
    INFO("failing operation " << n << " of " << ops << " of rank 0");
    std::vector<RankRun> runs = runRanks(p, kWorld, true, {{4}}, data, {}, n, 0, true, 2);
    CHECK(runs[0].error.find("injected") != std::string::npos);
    CHECK(runs[0].stats.live_bytes == 0);
    CHECK(runs[1].stats.live_bytes == 0);
    if (!runs[1].error.empty()) CHECK(runs[1].error.find("rank 0") != std::string::npos);
  }
}

TEST_CASE("spmd: a failure on one rank: it reports the call, the others say which rank failed, nothing leaks",
          "[spmd][injection]") {
  Program p = parseOk(readFile(kSpmd + "collectives.hir"), "collectives.hir");
  constexpr int kWorld = 2;
  auto data = [](int) { return std::vector<std::vector<float>>{std::vector<float>(4, 1)}; };
  // Count rank 0's fallible operations, then fail each in turn.
  std::vector<RankRun> clean = runRanks(p, kWorld, false, {{4}}, data);
  REQUIRE(clean[0].error == "");
  uint64_t ops = clean[0].callOps;
  REQUIRE(ops > 6);
  size_t collectiveFailures = 0;
  for (bool jit : {false, true})
    for (uint64_t n = 1; n <= ops; ++n) {
      INFO((jit ? "jit" : "eval") << ", failing operation " << n << " of rank 0");
      std::vector<RankRun> runs = runRanks(p, kWorld, jit, {{4}}, data, {}, n, 0);
      CHECK(runs[0].error.find("injected") != std::string::npos);
      CHECK(runs[0].stats.live_bytes == 0);
      CHECK(runs[1].stats.live_bytes == 0);
      // Rank 1 fails too when it needs rank 0 after the failure, and then
      // says so; it may also have finished (its receive came first).
      if (!runs[1].error.empty()) CHECK(runs[1].error.find("rank 0") != std::string::npos);
      if (runs[0].error.find("rank 0: ") != std::string::npos) ++collectiveFailures;  // a collective of rank 0
    }
  CHECK(collectiveFailures >= 14);  // 7 collectives (and the group brackets), both paths
}

TEST_CASE("spmd: a group that receives before it sends proceeds; a short input is refused with the counts",
          "[spmd]") {
  const std::string fill = "kernel @fill_rank(ptr<f32>, i64, i64) {\n  host = \"fill_rank\"\n}\n";
  Program ring = parseOk(fill + R"(func @main(%x: f32[?]) -> (f32[?]) {
  %rank = rank
  %world = world
  %n = size %x, 0
  %a = alloc f32[%n]
  launch @fill_rank grid(1, 1, 1) block(1, 1, 1) smem(0) (%a, %n, %rank)
  %r1 = add %rank, 1
  %next = mod %r1, %world
  %rw = add %rank, %world
  %rw1 = sub %rw, 1
  %prev = mod %rw1, %world
  %got = alloc f32[%n]
  recv %got, %prev
  send %a, %next
  free %a
  return %got
}
)",
                         "ring_recv_first.hir");
  auto data = [](int) { return std::vector<std::vector<float>>{std::vector<float>(3, 1)}; };
  for (bool jit : {false, true}) {
    std::vector<RankRun> runs = runRanks(ring, 3, jit, {{3}}, data);
    for (int r = 0; r < 3; ++r) {
      INFO((jit ? "jit" : "eval") << ", rank " << r);
      REQUIRE(runs[r].error == "");
      CHECK(runs[r].outputs[0][0] == static_cast<float>(((r + 2) % 3) * 1000 + 1));
    }
  }
  // all_gather into an input that holds one rank's share: both ranks refuse
  // before moving anything, and say what was needed.
  Program shortDst = parseOk(R"(func @main(%x: f32[?], %y: f32[?]) -> () {
  all_gather %x, %y
  return
}
)",
                             "short.hir");
  std::vector<RankRun> runs = runRanks(shortDst, 2, false, {{4}, {4}}, [](int) {
    return std::vector<std::vector<float>>{std::vector<float>(4, 1), std::vector<float>(4, 2)};
  });
  INFO(runs[0].error);
  CHECK(runs[0].error.find("rank 0: all_gather (all_gather of @main at short.hir:2:3): the destination holds 4 "
                           "elements, the call writes 8") == 0);
  CHECK(!runs[1].error.empty());
}

TEST_CASE("spmd: graph mode refuses work other than sends and receives inside a group, naming it", "[spmd][graph]") {
  hj_comm_id id;
  REQUIRE(hj_comm_unique_id(HJ_BACKEND_HOST, &id) == HJ_OK);
  auto rt = makeRuntime();
  hj_context *ctx = rt->context();
  REQUIRE(hj_comm_init(ctx, &id, 1, 0) == HJ_OK);
  const char key[] = "group";
  int32_t done = 0, again = 0;
  REQUIRE(hj_graph_call(ctx, key, sizeof key, nullptr, 0, 0, nullptr, 0, nullptr, 0, nullptr, 0, &done) == HJ_OK);
  REQUIRE(done == 0);
  REQUIRE(hj_collective(ctx, HJ_COLL_GROUP_BEGIN, nullptr, 0, nullptr, 0, 0, HJ_DTYPE_f32, 0, 0, "g") == HJ_OK);
  CHECK(hj_set_stream(ctx, 1) == HJ_ERR_INVALID_ARGUMENT);
  CHECK(std::string(hj_last_error()) ==
        "graph mode: a change of stream inside a send/receive group (between its GROUP_BEGIN and GROUP_END); a group "
        "node holds only its sends and receives");
  CHECK(hj_event_record(ctx, 0) == HJ_ERR_INVALID_ARGUMENT);
  int32_t st = hj_graph_end(ctx, HJ_ERR_INVALID_ARGUMENT, nullptr, nullptr, &again);
  CHECK(st == HJ_ERR_INVALID_ARGUMENT);
  CHECK(again == 0);
  CHECK(rt->stats().live_bytes == 0);
}
