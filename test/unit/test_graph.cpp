// test_graph.cpp - graph mode on the host backend: parity with eager calls
// (outputs, records, stats) on every program of the repository, signature
// changes, cache eviction, input and output addresses that move, the memory
// plan, the zero-init flags, fallbacks and their reasons, and failures.
#include <algorithm>
#include <cstring>
#include <random>
#include <thread>

#include "common/inject.h"
#include "helpers.h"
#include "hostjit/exec/parity.h"

using namespace hostjit;
using namespace hostjit::test;

namespace {

// The counters a call's runtime calls make, which graph mode keeps as eager
// calls do (backend allocations and pool hits differ by design).
std::string callCounters(const hj_stats &s) {
  return "allocs=" + std::to_string(s.allocs) + " frees=" + std::to_string(s.frees) +
         " memsets=" + std::to_string(s.memsets) + " fills=" + std::to_string(s.fills) +
         " launches=" + std::to_string(s.launches) + " live=" + std::to_string(s.live_bytes) +
         " peak=" + std::to_string(s.peak_bytes);
}

// `calls` calls of one program on a fresh runtime, recording each; the
// outputs of every call are kept.
struct Calls {
  std::vector<std::vector<std::string>> records;
  std::vector<std::vector<Tensor>> outputs;
  hj_stats stats{};
  std::shared_ptr<Runtime> rt;
};

Calls runCalls(const Program &p, const InputSet &in, const std::vector<ScalarArg> &scalars, bool jit, bool graph,
               int calls, bool record, hj_options o = testOptions()) {
  Calls c;
  c.rt = makeRuntime(o);
  Runner runner(p, c.rt, jit, OptLevel::O2, graph);
  for (int i = 0; i < calls; ++i) {
    hj_record_enable(c.rt->context(), record ? 1 : 0);
    auto out = runner.run(in.span(), scalars);
    INFO((out ? "" : out.error().message));
    REQUIRE(out);
    if (record) c.records.push_back(c.rt->recordLines());
    c.outputs.push_back(std::move(*out));
  }
  hj_record_enable(c.rt->context(), 0);
  c.stats = c.rt->stats();
  int32_t zero = 0;
  REQUIRE(hj_arena_check_zero(c.rt->context(), &zero) == HJ_OK);
  CHECK(zero == 1);
  return c;
}

// One graph-mode call against one eager call: both succeed, same outputs.
void checkSameOutputs(Expected<std::vector<Tensor>> graph, Expected<std::vector<Tensor>> eager) {
  INFO((graph ? "" : graph.error().message));
  REQUIRE(graph);
  REQUIRE(eager);
  auto diff = compareOutputs(*graph, *eager);
  INFO((diff ? *diff : ""));
  CHECK(!diff);
}

void checkSame(const Calls &eager, const Calls &graph, const std::string &what) {
  REQUIRE(eager.outputs.size() == graph.outputs.size());
  for (size_t i = 0; i < eager.outputs.size(); ++i) {
    INFO(what << ", call " << i + 1);
    auto diff = compareOutputs(eager.outputs[i], graph.outputs[i]);
    INFO((diff ? *diff : ""));
    CHECK(!diff);
    if (i < eager.records.size() && i < graph.records.size()) {
      auto rdiff = compareRecords(eager.records[i], graph.records[i], "eager", "graph");
      INFO((rdiff ? *rdiff : ""));
      CHECK(!rdiff);
    }
  }
}

const char *kCopyChain = R"(
kernel @copy_f32(ptr<f32>, ptr<f32>, i64) {
  host = "copy_f32"
}
kernel @count_and_reset(ptr<i32>, ptr<i32>) {
  host = "count_and_reset"
}

func @main(%x: f32[?]) -> (f32[?], i32[1]) {
  %n = size %x, 0
  %blocks = ceildiv %n, 256
  %y = alloc f32[%n]
  %seen = alloc i32[1] zero_init
  %a = alloc f32[%n]
  launch @copy_f32 grid(%blocks, 1, 1) block(256, 1, 1) smem(0) (%x, %a, %n)
  %s1 = alloc i32[1] zero_init resets_to_zero
  launch @count_and_reset grid(1, 1, 1) block(1, 1, 1) smem(0) (%s1, %seen)
  free %s1
  %b = alloc f32[%n]
  launch @copy_f32 grid(%blocks, 1, 1) block(256, 1, 1) smem(0) (%a, %b, %n)
  free %a
  %c = alloc f32[%n]
  launch @copy_f32 grid(%blocks, 1, 1) block(256, 1, 1) smem(0) (%b, %c, %n)
  free %b
  %s2 = alloc i32[1] zero_init resets_to_zero
  launch @count_and_reset grid(1, 1, 1) block(1, 1, 1) smem(0) (%s2, %seen)
  free %s2
  launch @copy_f32 grid(%blocks, 1, 1) block(256, 1, 1) smem(0) (%c, %y, %n)
  free %c
  return %y, %seen
}
)";

// The input %x of a one-input program, n random non-zero floats.
InputSet input(const std::shared_ptr<Runtime> &rt, const Program &p, int64_t n, uint64_t seed) {
  auto plan = makePlan(p);
  REQUIRE(plan);
  auto in = InputSet::random(rt, *plan, {{"x", {n}}}, seed);
  REQUIRE(in);
  return std::move(*in);
}

std::vector<float> floatsOf(const InputSet &in) {
  const std::vector<unsigned char> &h = in.hostData(0);
  std::vector<float> v(h.size() / 4);
  std::memcpy(v.data(), h.data(), h.size());
  return v;
}

std::vector<float> hostFloats(const Tensor &t) {
  auto h = t.toHost();
  REQUIRE(h);
  std::vector<float> v(h->size() / 4);
  std::memcpy(v.data(), h->data(), h->size());
  return v;
}

}  // namespace

TEST_CASE("graph mode: every program, eager parity of outputs, records and counters", "[graph]") {
  size_t programs = 0, fast = 0;
  for (const Subject &s : subjects()) {
    auto plan = makePlan(s.program);
    REQUIRE(plan);
    for (const ParityArgs &args : s.args) {
      auto inRt = makeRuntime();
      auto in = InputSet::random(inRt, *plan, args.shapes, 11);
      REQUIRE(in);
      auto scalars = scalarArgs(*plan, args.scalars);
      for (bool jit : {false, true}) {
        std::string what = s.file + (jit ? " (jit)" : " (eval)");
        INFO(what);
        // Recorded: every graph-mode call runs the program against the graph.
        Calls eager = runCalls(s.program, *in, scalars, jit, false, 3, true);
        Calls graph = runCalls(s.program, *in, scalars, jit, true, 3, true);
        checkSame(eager, graph, what + ", recorded");
        CHECK(graph.stats.graph_builds == 1);
        CHECK(graph.stats.graph_replays == 3);
        CHECK(graph.stats.graph_fallbacks == 0);
        // Not recorded: replays skip the program where they can.
        Calls eagerFast = runCalls(s.program, *in, scalars, jit, false, 4, false);
        Calls graphFast = runCalls(s.program, *in, scalars, jit, true, 4, false);
        checkSame(eagerFast, graphFast, what + ", fast");
        CHECK(callCounters(eagerFast.stats) == callCounters(graphFast.stats));
        CHECK(graphFast.stats.graph_replays == 4);
        fast += graphFast.stats.graph_fast;
      }
    }
    ++programs;
  }
  CHECK(programs >= 8);
  CHECK(fast > 0);
}

TEST_CASE("graph mode: the memory plan shares memory between buffers whose lifetimes do not overlap", "[graph]") {
  Program p = parseOk(kCopyChain);
  auto rt = makeRuntime();
  Runner r(p, rt, true, OptLevel::O2, true);
  for (int64_t n : {1000, 1000, 77, 1000}) {
    auto x = input(rt, p, n, 3);
    auto in = x.span();
    auto out = r.run(in);
    REQUIRE(out);
    CHECK(hostFloats((*out)[0]) == floatsOf(x));
    auto seen = (*out)[1].toHost();
    REQUIRE(seen);
    int32_t s;
    std::memcpy(&s, seen->data(), 4);
    CHECK(s == 0);  // both semaphores were zero when their kernels started
  }
  hj_stats st = rt->stats();
  CHECK(st.graph_builds == 2);  // n = 1000 and n = 77
  CHECK(st.graph_replays == 4);
  // One shape of work, one plan: for n = 1000, %a, %b, %c (4000 bytes
  // each, at most two alive at once) take two 4096-byte slots; the two
  // semaphores share one 256-byte slot. n = 77 fits the same slots.
  CHECK(st.graph_bytes == 2 * 4096 + 256);
  CHECK(st.graph_replans == 0);
}

TEST_CASE("graph mode: signatures change, the cache evicts those on probation, then the least recently used",
          "[graph]") {
  // Counts the builds of the host-update policy: no graph built again for device updates.
  ScopedEnv hostUpdates("HOSTJIT_GRAPH_DEVICE_UPDATES", "0");
  Program p = parseOk(kCopyChain);
  hj_options o = testOptions();
  o.graph_cache = 2;
  auto rt = makeRuntime(o);
  Runner r(p, rt, false, OptLevel::O2, true);
  auto eagerRt = makeRuntime();
  Runner eager(p, eagerRt, false);
  int64_t sizes[] = {10, 300, 10, 5000, 300, 10, 5000};
  for (int64_t n : sizes) {
    INFO("n = " << n);
    auto x = input(rt, p, n, static_cast<uint64_t>(n));
    auto in = x.span();
    checkSameOutputs(r.run(in), eager.run(in));
  }
  hj_stats st = rt->stats();
  // 10 new, 300 new (both on probation), 10 replay (off probation), 5000
  // new (evicts 300, the oldest on probation), 300 new, back from
  // probation so not on it (evicts 5000, on probation), 10 replay, 5000
  // new, back (evicts 300, the least recently used; none is on probation).
  // Each new signature builds a graph or is bound to one; 10, at a graph
  // holding another's values both times it replays, builds it again.
  CHECK(st.graph_builds + st.graph_reuses == 7);
  CHECK(st.graph_evictions == 3);
  CHECK(st.graph_replays == 7);
  // One plan for every n: slots of a power of two bytes, grown for 300
  // (1200 bytes: 2048) and 5000 (20000 bytes: 32768).
  CHECK(st.graph_replans == 2);
  CHECK(st.graph_bytes == 2 * 32768 + 256);
  hj_graph_clear(rt->context());
  CHECK(rt->stats().graph_bytes == 0);
}

TEST_CASE("graph mode: signatures seen once leave the cache first, those that come back stay", "[graph]") {
  // Two lengths come back every round between ten seen once, in a cache of
  // 8: evicting the least recently used alone (HOSTJIT_GRAPH_PROBATION=0)
  // evicts the two before they come back, so every call traces anew. With
  // 4 on probation, the ten pass through probation; the two, evicted from
  // it in the first round, come back in the second (traced, off
  // probation) and replay from the third on. A reserved length is never on
  // probation: it replays after the ten too. Outputs are eager's throughout.
  Program p = parseOk(kCopyChain);
  for (const char *probation : {"4", "0"}) {
    INFO("HOSTJIT_GRAPH_PROBATION=" << probation);
    ScopedEnv limit("HOSTJIT_GRAPH_PROBATION", probation);
    hj_options o = testOptions();
    o.graph_cache = 8;
    auto rt = makeRuntime(o);
    Runner r(p, rt, true, OptLevel::O2, true);
    auto eagerRt = makeRuntime();
    Runner eager(p, eagerRt, true);
    auto call = [&](int64_t n) {
      INFO("n = " << n);
      auto x = input(rt, p, n, static_cast<uint64_t>(n));
      auto in = x.span();
      checkSameOutputs(r.run(in), eager.run(in));
      return std::string(hj_graph_outcome(rt->context()));
    };
    auto reservedX = input(rt, p, 777, 777);
    REQUIRE(r.exe().reserveGraph(reservedX.span()));
    int recurringReplays = 0, reservedReplays = 0;
    for (int round = 0; round < 5; ++round) {
      for (int64_t n : {16, 32}) {
        std::string way = call(n);
        INFO("round " << round << ", n = " << n << ": " << way);
        bool replay = way.find("replay") != std::string::npos && way.rfind("new signature", 0) != 0;
        if (round >= 2) recurringReplays += replay;
        if (std::string(probation) == "4" && round == 0) CHECK(way.rfind("new signature", 0) == 0);
        // Back from probation with room in the cache: a graph of its own at once.
        if (std::string(probation) == "4" && round == 1) CHECK(way == "new signature: graph built");
      }
      for (int64_t i = 0; i < 10; ++i) call(1000 + round * 10 + i);
      std::string way = call(777);
      reservedReplays += way.find("replay") != std::string::npos && way.rfind("new signature", 0) != 0;
    }
    hj_stats st = rt->stats();
    CHECK(st.graph_fallbacks == 0);
    if (std::string(probation) == "4") {
      CHECK(recurringReplays == 6);  // both, rounds 2 to 4
      CHECK(reservedReplays == 5);
      // The ten of each round, and the two in the first, evicted from probation (but the last round's 4).
      CHECK(st.graph_evictions == 5 * 10 + 2 - 4);
    } else {
      CHECK(recurringReplays == 0);
      CHECK(reservedReplays == 0);
    }
    CHECK(rt->stats().live_bytes == 0);
  }
}

TEST_CASE("graph mode: inputs and outputs at new addresses patch only the nodes that use them", "[graph]") {
  Program p = parseOk(kCopyChain);
  auto rt = makeRuntime();
  Runner r(p, rt, true, OptLevel::O2, true);
  auto x1 = input(rt, p, 600, 1);
  auto x2 = input(rt, p, 600, 2);
  auto in1 = x1.span(), in2 = x2.span();
  {
    auto out = r.run(in1);  // builds
    REQUIRE(out);
  }
  hj_reset_stats(rt->context());
  {
    auto out = r.run(in1);  // same input, the output's block back from the pool: nothing to update
    REQUIRE(out);
    CHECK(hostFloats((*out)[0]) == floatsOf(x1));
  }
  CHECK(rt->stats().graph_updates == 0);
  CHECK(rt->stats().graph_fast == 1);
  {
    auto out = r.run(in2);  // a new input address: the first copy's node only
    REQUIRE(out);
    CHECK(hostFloats((*out)[0]) == floatsOf(x2));
  }
  CHECK(rt->stats().graph_updates == 1);
  std::vector<Tensor> kept;
  {
    auto out = r.run(in2);  // the outputs are kept: the next call's are elsewhere
    REQUIRE(out);
    kept = std::move(*out);
  }
  hj_reset_stats(rt->context());
  auto out = r.run(in1);
  REQUIRE(out);
  CHECK(hostFloats((*out)[0]) == floatsOf(x1));
  CHECK(hostFloats(kept[0]) == floatsOf(x2));
  // The input's node, the output's last copy, the memset of %seen and the
  // two semaphore kernels that count into it.
  CHECK(rt->stats().graph_updates == 5);
  // A replay that runs the program (recording) in between sets the nodes to
  // its own addresses; the fast replay after it must not trust what it saw.
  for (int call = 0; call < 3; ++call) {
    hj_record_enable(rt->context(), call == 1);
    auto o = r.run(call == 1 ? in2 : in1);
    REQUIRE(o);
    CHECK(hostFloats((*o)[0]) == floatsOf(call == 1 ? x2 : x1));
  }
  hj_record_enable(rt->context(), 0);
}

TEST_CASE("graph mode: outputs of one size come back where the nodes point, whatever order they were freed in",
          "[graph]") {
  Program p = parseOk(R"(
kernel @copy_f32(ptr<f32>, ptr<f32>, i64) {
  host = "copy_f32"
}

func @main(%x: f32[?]) -> (f32[?], f32[?], f32[?]) {
  %n = size %x, 0
  %a = alloc f32[%n]
  launch @copy_f32 grid(1, 1, 1) block(1, 1, 1) smem(0) (%x, %a, %n)
  %b = alloc f32[%n]
  launch @copy_f32 grid(1, 1, 1) block(1, 1, 1) smem(0) (%a, %b, %n)
  %c = alloc f32[%n]
  launch @copy_f32 grid(1, 1, 1) block(1, 1, 1) smem(0) (%b, %c, %n)
  return %a, %b, %c
}
)");
  auto rt = makeRuntime();
  Runner r(p, rt, true, OptLevel::O2, true);
  auto x = input(rt, p, 300, 5);
  for (int call = 0; call < 2; ++call) REQUIRE(r.run(x.span()));  // builds, then a fast replay
  hj_reset_stats(rt->context());
  for (int call = 0; call < 6; ++call) {
    auto out = r.run(x.span());
    REQUIRE(out);
    for (const Tensor &t : *out) CHECK(hostFloats(t) == floatsOf(x));
    if (call % 2) std::reverse(out->begin(), out->end());  // freed in one order, then the other
  }
  CHECK(rt->stats().graph_fast == 6);
  CHECK(rt->stats().graph_updates == 0);
}

TEST_CASE("graph mode: a loop's ping-pong buffers that the call frees are planned; replays are fast", "[graph][loops]") {
  const std::string file = std::string(HOSTJIT_SOURCE_DIR) + "/test/programs/loops_carried.hir";
  Program p = parseOk(readFile(file), file);
  auto plan = makePlan(p);
  REQUIRE(plan);
  auto rt = makeRuntime();
  auto in = InputSet::random(rt, *plan, {{"x", {7}}}, 3);
  REQUIRE(in);
  auto scalars = scalarArgs(*plan, {{"n", "5"}});
  Calls eager = runCalls(p, *in, scalars, true, false, 4, false);
  Calls graph = runCalls(p, *in, scalars, true, true, 4, false);
  checkSame(eager, graph, "loops_carried.hir");
  CHECK(graph.stats.graph_builds == 1);
  CHECK(graph.stats.graph_fast == 3);
  CHECK(graph.stats.graph_bytes > 0);
  CHECK(callCounters(eager.stats) == callCounters(graph.stats));
}

TEST_CASE("graph mode: zero_init, resets_to_zero and HOSTJIT_FILL_NAN keep their meaning", "[graph]") {
  // zero_init intermediates become memset nodes: the kernel sees zero on
  // every replay although the previous replay left 5 there.
  Program p = parseOk(R"(
kernel @count_and_reset(ptr<i32>, ptr<i32>) {
  host = "count_and_reset"
}
kernel @copy_bytes(ptr<u8>, ptr<u8>, i64) {
  host = "copy_bytes"
}
func @main(%x: f32[?]) -> (i32[1], u8[8]) {
  %seen = alloc i32[1] zero_init
  %t = alloc i32[1] zero_init
  %u = alloc u8[8]
  launch @count_and_reset grid(1, 1, 1) block(1, 1, 1) smem(0) (%t, %seen)
  launch @copy_bytes grid(1, 1, 1) block(1, 1, 1) smem(0) (%u, %u, 0)
  %out = alloc u8[8]
  launch @copy_bytes grid(1, 1, 1) block(1, 1, 1) smem(0) (%u, %out, 8)
  free %u
  free %t
  return %seen, %out
}
)");
  hj_options o = testOptions();
  o.fill_nan = 1;
  auto rt = makeRuntime(o);
  Runner r(p, rt, false, OptLevel::O2, true);
  auto x = input(rt, p, 4, 1);
  auto in = x.span();
  for (int call = 0; call < 3; ++call) {
    auto out = r.run(in);
    REQUIRE(out);
    auto seen = (*out)[0].toHost(), bytes = (*out)[1].toHost();
    REQUIRE(seen);
    REQUIRE(bytes);
    int32_t s;
    std::memcpy(&s, seen->data(), 4);
    CHECK(s == 0);
    CHECK(*bytes == std::vector<unsigned char>(8, 0xFF));  // u8's NaN pattern, filled by a graph node
  }
  CHECK(rt->stats().graph_replays == 3);
  CHECK(rt->stats().fills == 6);  // %u and %out, per call, as eager calls count them
}

TEST_CASE("graph mode: HOSTJIT_CHECK_ZEROED finds a kernel that leaves a resets_to_zero buffer non-zero",
          "[graph]") {
  Program p = parseOk(R"(
kernel @leaves_nonzero(ptr<i32>) {
  host = "leaves_nonzero"
}
func @main(%x: f32[?]) -> (f32[?]) {
  %n = size %x, 0
  %y = alloc f32[%n]
  %sem = alloc i32[4] zero_init resets_to_zero
  launch @leaves_nonzero grid(1, 1, 1) block(1, 1, 1) smem(0) (%sem)
  free %sem
  return %y
}
)");
  hj_options o = testOptions();
  o.check_zeroed = 1;
  auto rt = makeRuntime(o);
  for (bool jit : {false, true}) {
    Runner r(p, rt, jit, OptLevel::O2, true);
    auto x = input(rt, p, 4, 1);
    auto in = x.span();
    for (int call = 0; call < 2; ++call) {  // the build, then a fast replay
      auto out = r.run(in);
      REQUIRE(!out);
      CHECK(out.error().status == HJ_ERR_NOT_ZEROED);
      CHECK_THAT(out.error().message,
                 Catch::Contains("buffer %sem (i32, 16 bytes, zero_init resets_to_zero) was not zero after the graph "
                                 "ran: byte 0 is 0x07; the last kernel given it was @leaves_nonzero"));
      CHECK(rt->stats().live_bytes == 0);
      int32_t zero = 0;
      REQUIRE(hj_arena_check_zero(rt->context(), &zero) == HJ_OK);
      CHECK(zero == 1);  // repaired for the next replay
    }
  }
}

TEST_CASE("graph mode: scalars outside the signature are kernel arguments, written into the nodes on every replay",
          "[graph]") {
  Program p = parseOk(readFile(std::string(HOSTJIT_SOURCE_DIR) + "/test/programs/scalars.hir"), "scalars.hir");
  auto plan = makePlan(p);
  REQUIRE(plan);
  auto rt = makeRuntime();
  auto eagerRt = makeRuntime();
  Runner graph(p, rt, true, OptLevel::O2, true), eager(p, eagerRt, true);
  auto in = InputSet::random(rt, *plan, {{"x", {7, 5}}}, 3);
  REQUIRE(in);
  for (int k : {3, -4, 3, 2}) {
    INFO("k = " << k);
    std::vector<ScalarArg> s = {ScalarArg::i32(k), ScalarArg::f32(0.5f * static_cast<float>(k)),
                                ScalarArg::f64(-1.25 * k), ScalarArg::boolean(k > 0)};
    checkSameOutputs(graph.run(in->span(), s), eager.run(in->span(), s));
  }
  hj_stats st = rt->stats();
  CHECK(st.graph_builds == 1);  // no scalar feeds a size or launch dim
  CHECK(st.graph_replays == 4);
  CHECK(st.graph_fast == 3);  // the expressions are computed, the program does not run
  CHECK(st.graph_updates > 0);
  // An argument that cannot be computed (here an i32 overflow) is the
  // program's error, as in an eager call.
  std::vector<ScalarArg> bad = {ScalarArg::i32(1000), ScalarArg::f32(1), ScalarArg::f64(1), ScalarArg::boolean(true)};
  auto a = graph.run(in->span(), bad), b = eager.run(in->span(), bad);
  REQUIRE(!a);
  REQUIRE(!b);
  CHECK(a.error().message == b.error().message);
  CHECK(rt->stats().live_bytes == 0);
}

TEST_CASE("graph mode: a key that misses what the calls depend on falls back to eager calls, with a reason",
          "[graph]") {
  Program p = parseOk(kCopyChain);
  auto rt = makeRuntime();
  auto ev = Evaluator::create(p, rt);
  REQUIRE(ev);
  hj_context *ctx = rt->context();
  // The same key for two sizes: wrong on purpose. Not `fast`, so that every
  // replay runs the program and can see that its calls changed (a fast
  // replay trusts the key).
  const int64_t key = 42;
  for (int64_t n : {100, 200, 200}) {
    auto x = input(rt, p, n, 5);
    auto in = x.span();
    void *data = x.pointers()[0]->data;
    void *outData[2];
    int64_t outDims[2];
    int32_t done = 0;
    REQUIRE(hj_graph_call(ctx, &key, sizeof key, &data, 1, 0, nullptr, 0, outData, 2, outDims, 1, &done) == HJ_OK);
    int32_t st = HJ_OK;
    if (!done)
      for (int32_t again = 1; again;)
        st = hj_graph_end(ctx, ev->call(ctx, in.data(), nullptr, outData, outDims), outData, outDims, &again);
    REQUIRE(st == HJ_OK);
    CHECK(outDims[0] == n);
    std::vector<float> y(static_cast<size_t>(n));
    REQUIRE(hj_copy_to_host(ctx, y.data(), outData[0], y.size() * 4) == HJ_OK);
    CHECK(y == floatsOf(x));
    if (n == 100) {
      CHECK(std::string(hj_graph_reason(ctx)).empty());
    } else {
      CHECK_THAT(hj_graph_reason(ctx), Catch::StartsWith("the program's runtime calls differ from those its graph was "
                                                         "built from (buffer %y, allocation 1, has other extents"));
    }
    for (void *o : outData) REQUIRE(hj_free(ctx, o) == HJ_OK);
  }
  CHECK(rt->stats().graph_fallbacks == 2);
  CHECK(rt->stats().live_bytes == 0);
  CHECK(rt->stats().graph_bytes == 0);  // the plan that did not fit is gone
  int32_t zero = 0;  // the eager-only entry has no plan left to check
  REQUIRE(hj_arena_check_zero(ctx, &zero) == HJ_OK);
  CHECK(zero == 1);
}

TEST_CASE("graph mode: a key that misses a trip count: a returned buffer the trace freed is a mismatch, nothing leaks",
          "[graph][loops]") {
  // A ping-pong: with 3 iterations the trace frees the buffers of
  // iterations 0 and 1 (planned), with 2 the result is iteration 1's.
  Program p = parseOk(R"(
kernel @copy_f32(ptr<f32>, ptr<f32>, i64) {
  host = "copy_f32"
}

func @main(%x: f32[?], %reps: i64) -> (f32[?]) {
  %n = size %x, 0
  %first = alloc f32[%n]
  launch @copy_f32 grid(1, 1, 1) block(1, 1, 1) smem(0) (%x, %first, %n)
  %last = for %i = 0 to %reps iter(%acc = %first) {
    %next = alloc f32[%n]
    launch @copy_f32 grid(1, 1, 1) block(1, 1, 1) smem(0) (%acc, %next, %n)
    free %acc
    yield %next
  }
  return %last
}
)");
  auto rt = makeRuntime();
  auto ev = Evaluator::create(p, rt);
  REQUIRE(ev);
  hj_context *ctx = rt->context();
  auto x = input(rt, p, 64, 9);
  auto in = x.span();
  void *data = x.pointers()[0]->data;
  const int64_t key = 7;  // the same key for every trip count: wrong on purpose
  for (int64_t reps : {3, 3, 2, 2}) {
    hj_value scalar;
    scalar.i64 = reps;
    void *outData[1];
    int64_t outDims[1];
    int32_t done = 0;
    REQUIRE(hj_graph_call(ctx, &key, sizeof key, &data, 1, 0, nullptr, 0, outData, 1, outDims, 1, &done) == HJ_OK);
    int32_t st = HJ_OK;
    if (!done)
      for (int32_t again = 1; again;)
        st = hj_graph_end(ctx, ev->call(ctx, in.data(), &scalar, outData, outDims), outData, outDims, &again);
    INFO("reps " << reps);
    REQUIRE(st == HJ_OK);
    std::vector<float> y(64);
    REQUIRE(hj_copy_to_host(ctx, y.data(), outData[0], y.size() * 4) == HJ_OK);
    CHECK(y == floatsOf(x));
    CHECK(rt->stats().live_bytes == 64 * 4);  // the output only
    REQUIRE(hj_free(ctx, outData[0]) == HJ_OK);
  }
  CHECK_THAT(hj_graph_reason(ctx), Catch::Contains("differ from those its graph was built from"));
  CHECK(rt->stats().graph_fallbacks == 2);
  CHECK(rt->stats().live_bytes == 0);
}

TEST_CASE("graph mode: synchronising after every launch falls back to eager calls", "[graph]") {
  Program p = parseOk(kCopyChain);
  hj_options o = testOptions();
  o.sync = 1;
  auto rt = makeRuntime(o);
  auto ev = Evaluator::create(p, rt);
  REQUIRE(ev);
  ev->setGraphMode(true);
  auto x = input(rt, p, 64, 5);
  auto in = x.span();
  auto out = ev->run(in);
  REQUIRE(out);
  CHECK(hostFloats((*out)[0]) == floatsOf(x));
  CHECK_THAT(hj_graph_reason(rt->context()), Catch::Contains("synchronises after every launch"));
  CHECK(rt->stats().graph_fallbacks == 1);
  CHECK(rt->stats().graph_builds == 0);
}

TEST_CASE("graph mode: a failure at every operation, while building and while replaying", "[graph][inject]") {
  for (const Subject &s : subjects()) {
    auto plan = makePlan(s.program);
    REQUIRE(plan);
    for (bool jit : {false, true}) {
      auto rt = makeRuntime();
      auto in = InputSet::random(rt, *plan, s.args[0].shapes, 7);
      REQUIRE(in);
      auto scalars = scalarArgs(*plan, s.args[0].scalars);
      Runner runner(s.program, rt, jit, OptLevel::O2, true);
      std::string what = s.file + (jit ? " (jit)" : " (eval)");
      uint64_t building = injectEverywhere(*rt, [&] {
        hj_graph_clear(rt->context());  // every call traces, plans and builds
        return runner.run(in->span(), scalars);
      }, what + ", building");
      uint64_t replaying = injectEverywhere(*rt, [&] { return runner.run(in->span(), scalars); }, what + ", replaying");
      CHECK(building > 0);
      CHECK(replaying > 0);
    }
  }
}

TEST_CASE("graph mode: 8 threads, one program, a context each", "[graph][threads]") {
  Program p = parseOk(kCopyChain);
  auto shared = makeRuntime();
  auto jit = sharedJit().compile(p, shared, noCache(OptLevel::O2));
  REQUIRE(jit);
  const CompiledProgram &cp = **jit;
  constexpr int kThreads = 8, kCalls = 2000;
  std::vector<std::string> errors(kThreads);
  std::vector<hj_stats> stats(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      hj_options o = testOptions();
      hj_context *ctx = nullptr;
      if (hj_context_create(&o, &ctx) != HJ_OK) {
        errors[t] = hj_last_error();
        return;
      }
      int64_t n = 100 + 37 * t;
      std::vector<float> x(static_cast<size_t>(n));
      for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(t * 1000 + static_cast<int>(i) + 1);
      DLTensor in{};
      in.data = x.data();
      in.device = {kDLCPU, 0};
      in.ndim = 1;
      in.dtype = {kDLFloat, 32, 1};
      in.shape = &n;
      const DLTensor *ins[] = {&in};
      for (int c = 0; c < kCalls && errors[t].empty(); ++c) {
        if (c % 500 == 0) x[0] = static_cast<float>(c);  // the input changes, its address does not
        void *outData[2];
        int64_t outDims[2];
        int32_t st = cp.callGraph(ctx, ins, nullptr, outData, outDims);
        if (st != HJ_OK) {
          errors[t] = hj_last_error();
          break;
        }
        if (std::memcmp(outData[0], x.data(), x.size() * 4) != 0 || *static_cast<int32_t *>(outData[1]) != 0)
          errors[t] = "wrong output at call " + std::to_string(c);
        for (void *o : outData) hj_free(ctx, o);
      }
      hj_get_stats(ctx, &stats[t]);
      hj_context_destroy(ctx);
    });
  for (auto &th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) {
    INFO("thread " << t);
    CHECK(errors[t].empty());
    CHECK(errors[t] == "");
    CHECK(stats[t].graph_builds == 1);
    CHECK(stats[t].graph_replays == kCalls);
    CHECK(stats[t].graph_fast == kCalls - 1);
    CHECK(stats[t].live_bytes == 0);
    CHECK(stats[t].allocs == stats[t].frees + 0u);
    CHECK(stats[t].launches == 6u * kCalls);
  }
}

TEST_CASE("graph mode: many inputs, some at one address, are their own signature", "[graph]") {
  // Twelve inputs: more than the few whose aliases are found pair by pair,
  // so the sorted path and its memo of the last call's addresses run.
  std::string text = "kernel @copy(ptr<f32>, ptr<f32>, i64) {\n  host = \"copy_f32\"\n}\n\nfunc @main(";
  for (int i = 0; i < 12; ++i) text += (i ? ", %a" : "%a") + std::to_string(i) + ": f32[4]";
  text += ") -> (f32[4]) {\n  %y = alloc f32[4]\n";
  for (int i = 0; i < 12; ++i) text += "  launch @copy grid(1, 1, 1) block(1, 1, 1) smem(0) (%a" + std::to_string(i) + ", %y, 4)\n";
  text += "  return %y\n}\n";
  Program p = parseOk(text, "many.hir");
  for (bool jit : {false, true}) {
    INFO((jit ? "jit" : "eval"));
    auto rt = makeRuntime();
    std::vector<Tensor> t;
    for (int i = 0; i < 12; ++i) {
      auto x = Tensor::fromHost(rt, {4}, std::vector<float>{float(i + 1), 2.5f, -1.0f, float(3 * i + 1)});
      REQUIRE(x);
      t.push_back(std::move(*x));
    }
    std::vector<DLTensor> dl;
    for (Tensor &x : t) dl.push_back(x.dl());
    Runner r(p, rt, jit, OptLevel::O2, /*graph=*/true);
    auto call = [&](std::vector<int> which) {
      std::vector<const DLTensor *> in;
      for (int w : which) in.push_back(&dl[w]);
      auto out = r.run(in);
      INFO((out ? "" : out.error().message));
      REQUIRE(out);
      return floats((*out)[0]);
    };
    std::vector<int> distinct{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, aliased = distinct, other = distinct;
    aliased[7] = 3;  // inputs 3 and 7 share memory
    other[11] = 4;   // another pair: a third signature
    // Each new signature builds a graph or is bound to one (the same dims).
    auto signatures = [&] { return rt->stats().graph_builds + rt->stats().graph_reuses; };
    CHECK(call(distinct) == floats(t[11]));
    CHECK(call(distinct) == floats(t[11]));
    CHECK(signatures() == 1);
    CHECK(call(aliased) == floats(t[11]));
    CHECK(signatures() == 2);
    CHECK(call(other) == floats(t[4]));
    CHECK(signatures() == 3);
    // Both come back to the graph that holds the third one's values: each
    // gets a graph of its own.
    CHECK(call(distinct) == floats(t[11]));
    CHECK(call(aliased) == floats(t[11]));
    CHECK(signatures() == 5);
    CHECK(rt->stats().graph_fast == 3);  // the second call, and the last two
  }
}

size_t footprintOf(size_t bytes) { return (bytes + 255) / 256 * 256; }

// A zeroed buffer (a memset node) and three launches, all sized by %n.
const char *const kShapes = R"(kernel @scale_vec(ptr<f32>, ptr<f32>, i64, f32) {
  host = "scale_vec"
}

kernel @add_vec(ptr<f32>, ptr<f32>, ptr<f32>, i64) {
  host = "add_vec"
}

func @main(%x: f32[?]) -> (f32[?]) {
  %n = size %x, 0
  %blocks = ceildiv %n, 256
  %a = alloc f32[%n] zero_init
  %t = alloc f32[%n]
  %y = alloc f32[%n]
  launch @scale_vec grid(%blocks, 1, 1) block(256, 1, 1) smem(0) (%x, %t, %n, 3.0)
  launch @add_vec grid(%blocks, 1, 1) block(256, 1, 1) smem(0) (%t, %a, %a, %n)
  launch @scale_vec grid(%blocks, 1, 1) block(256, 1, 1) smem(0) (%a, %y, %n, 0.5)
  free %t
  free %a
  return %y
}
)";

// One call of kShapes with x of n elements, value(i) each, in graph mode
// and eagerly: both give 0.5 * (3 * x), and the graph-mode call counts the
// eager call's memsets. Returns what the graph-mode call did.
std::string callShapes(Runner &graph, Runner &eager, const std::shared_ptr<Runtime> &graphRt,
                       const std::shared_ptr<Runtime> &eagerRt, int64_t n, float (*value)(int64_t)) {
  INFO("n = " << n);
  std::vector<float> xv(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) xv[size_t(i)] = value(i);
  auto x = Tensor::fromHost(graphRt, {n}, xv);
  REQUIRE(x);
  DLTensor xd = x->dl();
  const DLTensor *in[] = {&xd};
  uint64_t memsetsBefore = graphRt->stats().memsets, eagerMemsets = eagerRt->stats().memsets;
  auto g = graph.run(in);
  auto e = eager.run(in);
  INFO((g ? "" : g.error().message));
  REQUIRE(g);
  REQUIRE(e);
  std::string way = hj_graph_outcome(graphRt->context());
  std::vector<float> want(xv.size());
  for (size_t i = 0; i < xv.size(); ++i) want[i] = 0.5f * (3.0f * xv[i]);
  CHECK(floats((*g)[0]) == want);
  CHECK(floats((*e)[0]) == want);
  CHECK(graphRt->stats().memsets - memsetsBefore == eagerRt->stats().memsets - eagerMemsets);
  return way;
}

TEST_CASE("graph mode: a graph whose nodes keep changing takes its updates at launch", "[graph]") {
  // kShapes over 80 calls of 40 extents (a cache of 16): every call is a
  // new signature bound to the shape's graph, its three kernel nodes given
  // new arguments and grids and its memset node a new size. Under auto the
  // graph is built again for device updates after kDeviceUpdatesAfter (4)
  // launches with host updates; under 1 it is built so at once; under 0
  // never. Outputs and memsets equal eager calls' throughout.
  Program p = parseOk(kShapes, "shapes.hir");
  std::vector<int64_t> extents;
  for (int round = 0; round < 2; ++round)
    for (int i = 0; i < 40; ++i) extents.push_back(1 + (i * 37) % 700);
  for (const char *mode : {"auto", "1", "0"}) {
    for (bool jit : {false, true}) {
      INFO("HOSTJIT_GRAPH_DEVICE_UPDATES=" << mode << (jit ? ", jit" : ", eval"));
      ScopedEnv updates("HOSTJIT_GRAPH_DEVICE_UPDATES", mode);
      ScopedEnv every("HOSTJIT_GRAPH_MIN_LAUNCHES", "0");  // graph mode for every call, however few its launches
      ScopedEnv shuffled("HOSTJIT_GRAPH_SHUFFLE", jit ? "5" : "");
      hj_options o = testOptions();
      o.graph_cache = 16;
      auto eagerRt = makeRuntime(), graphRt = makeRuntime(o);
      Runner eager(p, eagerRt, jit), graph(p, graphRt, jit, OptLevel::O2, /*graph=*/true);
      std::vector<std::string> ways;
      for (int64_t n : extents)
        ways.push_back(
            callShapes(graph, eager, graphRt, eagerRt, n, [](int64_t i) { return 0.75f + float((i * 7919) % 89) / 8.0f; }));
      hj_stats s = graphRt->stats();
      CHECK(s.graph_replays == extents.size());
      CHECK(s.graph_fallbacks == 0);
      CHECK(s.live_bytes == 0);
      auto rebuilt = std::find_if(ways.begin(), ways.end(), [](const std::string &w) {
        return w.find("built again to take its node updates at launch") != std::string::npos;
      });
      size_t after = extents.size() - 1 - static_cast<size_t>(rebuilt - ways.begin());
      if (std::string(mode) == "auto") {
        REQUIRE(rebuilt != ways.end());
        INFO("rebuilt at call " << (rebuilt - ways.begin()) << ": " << *rebuilt);
        // Calls 2 to 4 were bound to the first graph and set its four nodes
        // by the host; the fifth, the fourth of its last 8 launches to need
        // updates, built it again from its own values; every later call set
        // its three kernel nodes at launch (the memset node's new size is
        // the host's).
        CHECK(rebuilt - ways.begin() == 4);
        CHECK(s.graph_builds == 2);
        CHECK(s.graph_builds + s.graph_reuses == extents.size() + 1);
        CHECK(s.graph_device_updates == 3 * after);
        CHECK(s.graph_updates == s.graph_device_updates + after + 4 * 3);
        CHECK_THAT(ways.back(), Catch::Contains("4 nodes updated (3 at launch)"));
      } else if (std::string(mode) == "1") {
        CHECK(rebuilt == ways.end());
        CHECK(s.graph_builds == 1);
        CHECK(s.graph_device_updates == 3 * (extents.size() - 1));
      } else {
        CHECK(rebuilt == ways.end());
        CHECK(s.graph_device_updates == 0);
        CHECK(s.graph_builds <= 3);
        CHECK_THAT(ways.back(), !Catch::Contains("at launch"));
      }
    }
  }
}

TEST_CASE("graph mode: a program said to change sizes takes updates at launch from its first build", "[graph]") {
  // kShapes over 40 extents under HOSTJIT_GRAPH_DEVICE_UPDATES=auto, with
  // hj_graph_sizes_change on for the program (Executable::
  // setGraphSizesChange): its one graph is built once, taking its three
  // kernel nodes' updates at launch from the second call on, where without
  // the hint auto builds it again at the fifth. The runtime's other
  // programs never carry it; turned off, a new graph of the program takes
  // host updates again.
  Program p = parseOk(kShapes, "shapes.hir");
  std::vector<int64_t> extents;
  for (int i = 0; i < 40; ++i) extents.push_back(1 + (i * 37) % 700);
  auto value = [](int64_t i) { return 0.25f + float((i * 613) % 97) / 16.0f; };
  for (bool jit : {false, true}) {
    INFO((jit ? "jit" : "eval"));
    ScopedEnv updates("HOSTJIT_GRAPH_DEVICE_UPDATES", "auto");
    ScopedEnv every("HOSTJIT_GRAPH_MIN_LAUNCHES", "0");
    auto eagerRt = makeRuntime(), graphRt = makeRuntime();
    Runner eager(p, eagerRt, jit), graph(p, graphRt, jit, OptLevel::O2, /*graph=*/true);
    Runner other(p, graphRt, jit, OptLevel::O2, /*graph=*/true);
    REQUIRE(graph.exe().setGraphSizesChange(true));
    CHECK(graph.exe().graphSizesChange());
    CHECK_FALSE(other.exe().graphSizesChange());
    for (int64_t n : extents) {
      std::string way = callShapes(graph, eager, graphRt, eagerRt, n, value);
      CHECK_THAT(way, !Catch::Contains("built again"));
    }
    hj_stats s = graphRt->stats();
    CHECK(s.graph_builds == 1);
    CHECK(s.graph_reuses == extents.size() - 1);
    CHECK(s.graph_device_updates == 3 * (extents.size() - 1));
    CHECK(s.live_bytes == 0);
    // The other program of the runtime: host updates, then auto's rebuild.
    hj_stats before = graphRt->stats();
    std::vector<std::string> ways;
    for (int64_t n : extents) ways.push_back(callShapes(other, eager, graphRt, eagerRt, n, value));
    s = graphRt->stats();
    CHECK(s.graph_builds - before.graph_builds == 2);
    CHECK_THAT(ways[4], Catch::Contains("built again to take its node updates at launch"));
    // Off, and the program's graphs forgotten: a new graph takes host updates until auto rebuilds it.
    REQUIRE(graph.exe().setGraphSizesChange(false));
    CHECK_FALSE(graph.exe().graphSizesChange());
    hj_graph_clear(graphRt->context());
    before = graphRt->stats();
    ways.clear();
    for (int i = 0; i < 3; ++i) ways.push_back(callShapes(graph, eager, graphRt, eagerRt, extents[size_t(i)], value));
    s = graphRt->stats();
    CHECK(s.graph_builds - before.graph_builds == 1);
    CHECK(s.graph_device_updates == before.graph_device_updates);
    CHECK_THAT(ways.back(), !Catch::Contains("at launch"));
  }
}

TEST_CASE("graph mode: hj_graph_sizes_change checks its arguments", "[graph]") {
  auto rt = makeRuntime();
  uint64_t id = 7;
  CHECK(hj_graph_sizes_change(nullptr, &id, sizeof id, 1) == HJ_ERR_INVALID_ARGUMENT);
  CHECK(hj_graph_sizes_change(rt->context(), nullptr, sizeof id, 1) == HJ_ERR_INVALID_ARGUMENT);
  CHECK_THAT(hj_last_error(), Catch::Contains("expected a key prefix of at least 1 byte, got NULL"));
  CHECK(hj_graph_sizes_change(rt->context(), &id, 0, 1) == HJ_ERR_INVALID_ARGUMENT);
  CHECK_THAT(hj_last_error(), Catch::Contains("got 0 bytes"));
  CHECK(hj_graph_sizes_change(rt->context(), &id, sizeof id, 1) == HJ_OK);
  CHECK(hj_graph_sizes_change(rt->context(), &id, sizeof id, 0) == HJ_OK);
}

TEST_CASE("graph mode: signatures that come back leave the graph taking updates at launch for their own",
          "[graph]") {
  // HOSTJIT_GRAPH_DEVICE_UPDATES=1: 8 extents, three rounds. The first
  // round binds all to one graph, which takes their nodes' values at
  // launch; in the second each but the last (whose values that graph
  // holds) comes back and gets a graph of its own; the third replays them
  // setting at most the input's new address, never a grid or a size.
  Program p = parseOk(kShapes, "shapes.hir");
  for (bool jit : {false, true}) {
    INFO((jit ? "jit" : "eval"));
    ScopedEnv updates("HOSTJIT_GRAPH_DEVICE_UPDATES", "1");
    ScopedEnv every("HOSTJIT_GRAPH_MIN_LAUNCHES", "0");
    auto eagerRt = makeRuntime(), graphRt = makeRuntime();
    Runner eager(p, eagerRt, jit), graph(p, graphRt, jit, OptLevel::O2, /*graph=*/true);
    auto value = [](int64_t i) { return 1.5f + float((i * 31) % 17) / 4.0f; };
    hj_stats before{};
    for (int round = 0; round < 3; ++round) {
      if (round == 2) before = graphRt->stats();
      for (int i = 0; i < 8; ++i) {
        std::string way = callShapes(graph, eager, graphRt, eagerRt, 100 + 300 * i, value);
        if (round == 2) CHECK_THAT(way, Catch::StartsWith("fast replay: "));
      }
      hj_stats s = graphRt->stats();
      if (round == 0) {
        CHECK(s.graph_builds == 1);
        CHECK(s.graph_device_updates == 3 * 7);
        CHECK(s.graph_grid_updates == 3 * 7);
      }
      if (round == 1) CHECK(s.graph_builds == 8);
    }
    hj_stats s = graphRt->stats();
    CHECK(s.graph_builds == 8);
    CHECK(s.graph_grid_updates == before.graph_grid_updates);
    CHECK(s.graph_updates - before.graph_updates <= 8);
    CHECK(s.graph_device_updates - before.graph_device_updates == s.graph_updates - before.graph_updates);
  }
}

TEST_CASE("graph mode: a new shape takes over the graph of the same shape of work", "[graph]") {
  // Counts the builds of the host-update policy: no graph built again for device updates.
  ScopedEnv hostUpdates("HOSTJIT_GRAPH_DEVICE_UPDATES", "0");
  // A zeroed buffer (a memset node) and three launches, all sized by %n:
  // every extent is its own signature, and all share a few executable
  // graphs, their nodes set to each signature's grids, sizes and addresses.
  Program p = parseOk(kShapes, "shapes.hir");
  // Extents that grow and shrink, more of them than the cache holds (16).
  std::vector<int64_t> extents;
  for (int round = 0; round < 2; ++round)
    for (int i = 0; i < 40; ++i) extents.push_back(1 + (i * 37) % 700);
  for (bool shuffle : {false, true}) {
    if (shuffle) setenv("HOSTJIT_GRAPH_SHUFFLE", "3", 1);
    for (bool jit : {false, true}) {
      INFO((jit ? "jit" : "eval") << (shuffle ? ", shuffled" : ""));
      hj_options o = testOptions();
      o.graph_cache = 16;
      setenv("HOSTJIT_GRAPH_MIN_LAUNCHES", "0", 1);  // graph mode for every call, however few its launches
      auto eagerRt = makeRuntime(), graphRt = makeRuntime(o);
      unsetenv("HOSTJIT_GRAPH_MIN_LAUNCHES");
      Runner eager(p, eagerRt, jit), graph(p, graphRt, jit, OptLevel::O2, /*graph=*/true);
      for (int64_t n : extents)
        callShapes(graph, eager, graphRt, eagerRt, n, [](int64_t i) { return 0.25f + float((i * 7919) % 101) / 16.0f; });
      hj_stats s = graphRt->stats();
      // Every call is a new signature (40 extents, a cache of 16), bound to
      // the graph whose grids are closest to its own (1, 2 or 3 blocks):
      // a signature seen once never builds one of its own.
      CHECK(s.graph_builds + s.graph_reuses == extents.size());
      CHECK(s.graph_builds <= 3);
      CHECK(s.graph_replays == extents.size());
      CHECK(s.graph_fallbacks == 0);
      CHECK(s.live_bytes == 0);
    }
    if (shuffle) unsetenv("HOSTJIT_GRAPH_SHUFFLE");
  }
  // HOSTJIT_GRAPHS_PER_SHAPE=0: every signature builds its own graph.
  setenv("HOSTJIT_GRAPHS_PER_SHAPE", "0", 1);
  setenv("HOSTJIT_GRAPH_MIN_LAUNCHES", "0", 1);
  hj_options o = testOptions();
  o.graph_cache = 16;
  auto rt = makeRuntime(o);
  unsetenv("HOSTJIT_GRAPHS_PER_SHAPE");
  unsetenv("HOSTJIT_GRAPH_MIN_LAUNCHES");
  Runner graph(p, rt, false, OptLevel::O2, /*graph=*/true);
  for (int64_t n : extents) {
    std::vector<float> xv(static_cast<size_t>(n), 1.5f);
    auto x = Tensor::fromHost(rt, {n}, xv);
    REQUIRE(x);
    DLTensor xd = x->dl();
    const DLTensor *in[] = {&xd};
    auto g = graph.run(in);
    REQUIRE(g);
    CHECK(floats((*g)[0]) == std::vector<float>(xv.size(), 2.25f));
  }
  CHECK(rt->stats().graph_builds == extents.size());
  CHECK(rt->stats().graph_reuses == 0);
}

TEST_CASE("graph mode: a plan grows for a larger shape, and smaller ones replay in it", "[graph]") {
  Program p = parseOk(kShapes, "shapes.hir");
  // One plan for every extent: 500 and 3000 do not fit the slots made
  // before them and grow them (a new block each time); 10 and 500 then
  // replay fast with their nodes moved to the new block.
  std::vector<int64_t> extents = {10, 500, 10, 500, 3000, 10, 500, 3000, 64, 2999};
  for (bool jit : {false, true}) {
    INFO((jit ? "jit" : "eval"));
    auto eagerRt = makeRuntime(), graphRt = makeRuntime();
    Runner eager(p, eagerRt, jit), graph(p, graphRt, jit, OptLevel::O2, /*graph=*/true);
    std::vector<std::string> ways;
    for (int64_t n : extents)
      ways.push_back(
          callShapes(graph, eager, graphRt, eagerRt, n, [](int64_t i) { return 1.0f + float((i * 31) % 17) / 8.0f; }));
    // What each call did (hj_graph_outcome): 500 and 3000 are bound to the
    // least recently used graph (setting its grids); 10, when it comes back
    // to a graph holding another's grids, gets a graph of its own.
    const char *bound = "new signature: bound to a cached graph of its shape of work, ";
    CHECK(ways[0] == "new signature: graph built");
    CHECK_THAT(ways[1], Catch::StartsWith(bound) && Catch::EndsWith(", memory plan grown"));
    CHECK(ways[2] == "fast replay: graph built (the graph it was bound to held another signature's values)");
    CHECK_THAT(ways[3], Catch::StartsWith("fast replay: "));  // the new input buffer's node, if it moved
    CHECK_THAT(ways[4], Catch::StartsWith(bound) && Catch::EndsWith(", memory plan grown"));
    CHECK(ways[5] == ways[2]);
    // 500's graph moved to the new block: the memset and the three launches at least.
    CHECK_THAT(ways[6], Catch::StartsWith("fast replay: ") && !Catch::Matches(".*: [0-3] nodes updated"));
    CHECK_THAT(ways[7], Catch::StartsWith("fast replay: "));
    // 64 and 2999 have the launch dims of 10 and 3000: bound to their graphs.
    CHECK_THAT(ways[8], Catch::StartsWith(bound));
    CHECK_THAT(ways[9], Catch::StartsWith(bound));
    hj_stats s = graphRt->stats();
    CHECK(s.graph_replans == 2);  // 10: 256-byte slots, 500: 2048, 3000: 16384
    CHECK(s.graph_fast == 5);     // 10, 500 and 3000 again; 64 and 2999 are new
    CHECK(s.graph_replays == extents.size());
    // The plan: %a and %t (12000 bytes each, both live) in 16384-byte slots,
    // %y an output: at most twice what 3000 needs.
    CHECK(s.graph_bytes == 2 * 16384);
    CHECK(s.graph_bytes <= 2 * (2 * footprintOf(3000 * 4)));
    CHECK(s.live_bytes == 0);
    // A recorded call runs the program against the plan.
    hj_record_enable(graphRt->context(), 1);
    auto x = Tensor::fromHost(graphRt, {77}, std::vector<float>(77, 2.0f));
    REQUIRE(x);
    DLTensor xd = x->dl();
    const DLTensor *in[] = {&xd};
    auto g = graph.run(in);
    REQUIRE(g);
    CHECK(floats((*g)[0]) == std::vector<float>(77, 3.0f));
    CHECK_THAT(hj_graph_outcome(graphRt->context()),
               Catch::StartsWith("new signature: ") && Catch::EndsWith("; the program ran again (the call is recorded)"));
    g = graph.run(in);
    REQUIRE(g);
    CHECK_THAT(hj_graph_outcome(graphRt->context()),
               Catch::StartsWith("replay that ran the program (the call is recorded): "));
    // Recorded calls, known and new signatures, one that grows the plan
    // again: each one's record is the eager call's.
    for (int64_t n : {10, 3000, 5000, 640}) {
      INFO("recorded, n = " << n);
      std::vector<float> xv(static_cast<size_t>(n), 0.5f + float(n % 7));
      auto xg = Tensor::fromHost(graphRt, {n}, xv);
      REQUIRE(xg);
      DLTensor xgd = xg->dl();
      const DLTensor *gin[] = {&xgd};
      hj_record_enable(graphRt->context(), 1);
      hj_record_enable(eagerRt->context(), 1);
      auto gr = graph.run(gin);
      auto er = eager.run(gin);
      REQUIRE(gr);
      REQUIRE(er);
      auto rdiff = compareRecords(eagerRt->recordLines(), graphRt->recordLines(), "eager", "graph");
      INFO((rdiff ? *rdiff : ""));
      CHECK(!rdiff);
      CHECK(floats((*gr)[0]) == floats((*er)[0]));
    }
    CHECK(graphRt->stats().graph_replans == 3);
    hj_record_enable(eagerRt->context(), 0);
    hj_record_enable(graphRt->context(), 0);
  }
}

TEST_CASE("graph mode: a plan reserved for the largest shape neither grows nor moves", "[graph]") {
  Program p = parseOk(kShapes, "shapes.hir");
  std::vector<int64_t> extents = {10, 500, 3000, 64, 2999, 1200, 10};
  for (bool jit : {false, true}) {
    INFO((jit ? "jit" : "eval"));
    auto eagerRt = makeRuntime(), graphRt = makeRuntime();
    Runner eager(p, eagerRt, jit), graph(p, graphRt, jit, OptLevel::O2, /*graph=*/true);
    hj_context *ctx = graphRt->context();
    // The upper bound: x of 3000 elements, whose data is never read (one
    // element behind it).
    auto small = Tensor::fromHost(graphRt, {1}, std::vector<float>{4.5f});
    REQUIRE(small);
    DLTensor bound = small->dl();
    int64_t boundShape[1] = {3000};
    bound.shape = boundShape;
    const DLTensor *in[] = {&bound};
    hj_record_enable(ctx, 1);
    hj_stats before = graphRt->stats();
    auto r = graph.exe().reserveGraph(in);
    INFO((r ? "" : r.error().message));
    REQUIRE(r);
    // Nothing ran: no launch, memset, allocation or record; the plan holds
    // %a and %t (12000 bytes each, both live) in 16384-byte slots.
    hj_stats after = graphRt->stats();
    CHECK(after.launches == before.launches);
    CHECK(after.memsets == before.memsets);
    CHECK(after.allocs == before.allocs);
    CHECK(after.graph_builds == 0);
    CHECK(after.graph_bytes == 2 * 16384);
    CHECK(after.live_bytes == before.live_bytes);
    CHECK(graphRt->recordLines().empty());
    hj_record_enable(ctx, 0);
    CHECK(std::string(hj_graph_outcome(ctx)) == "reserved: the memory plan of its shape of work holds 32768 bytes");
    uint64_t count = 0, block = 0, zeroedAt = 0;
    REQUIRE(hj_graph_plan_size(ctx, &count, &block, &zeroedAt) == HJ_OK);
    CHECK(block == 2 * 16384);
    // Reserving it again finds it planned.
    REQUIRE(graph.exe().reserveGraph(in));
    CHECK(graphRt->stats().graph_bytes == 2 * 16384);
    // Every extent up to the bound fits: no plan grows, every output is the
    // eager call's, and the buffers keep their places.
    std::vector<std::string> ways;
    std::vector<uint64_t> offsets;
    for (int64_t n : extents) {
      ways.push_back(
          callShapes(graph, eager, graphRt, eagerRt, n, [](int64_t i) { return 0.5f + float((i * 23) % 19) / 8.0f; }));
      REQUIRE(hj_graph_plan_size(ctx, &count, &block, &zeroedAt) == HJ_OK);
      CHECK(block == 2 * 16384);
      for (uint64_t i = 0; i < count; ++i) {
        hj_plan_buffer b;
        REQUIRE(hj_graph_plan_get(ctx, i, &b) == HJ_OK);
        if (offsets.size() < count) offsets.push_back(b.offset);
        CHECK(b.offset == offsets[size_t(i)]);
      }
    }
    CHECK(ways[0] == "new signature: graph built");
    // 3000 is the reserved signature: its first call runs the program
    // against the plan and builds its graph.
    CHECK(ways[2] == "replay that ran the program (its graph is not yet built): 0 nodes updated");
    for (const std::string &w : ways) CHECK_THAT(w, !Catch::Contains("memory plan grown"));
    hj_stats s = graphRt->stats();
    CHECK(s.graph_replans == 0);
    CHECK(s.graph_bytes == 2 * 16384);
    // A larger bound grows the plan once, before the calls that need it.
    int64_t larger[1] = {5000};
    bound.shape = larger;
    REQUIRE(graph.exe().reserveGraph(in));
    CHECK(std::string(hj_graph_outcome(ctx)) ==
          "reserved: the memory plan of its shape of work holds 65536 bytes (grown)");
    CHECK(graphRt->stats().graph_replans == 1);
    for (int64_t n : {4999, 10, 5000})
      CHECK_THAT(callShapes(graph, eager, graphRt, eagerRt, n, [](int64_t i) { return 1.25f - float(i % 5) / 4.0f; }),
                 !Catch::Contains("memory plan grown"));
    CHECK(graphRt->stats().graph_replans == 1);
    CHECK(graphRt->stats().live_bytes == 0);
    // run()'s argument checks.
    auto wrong = Tensor::fromHost(graphRt, {2, 2}, std::vector<float>{1, 2, 3, 4});
    REQUIRE(wrong);
    DLTensor wd = wrong->dl();
    const DLTensor *bad[] = {&wd};
    auto e = graph.exe().reserveGraph(bad);
    REQUIRE(!e);
    CHECK_THAT(e.error().message, Catch::Contains("rank"));
  }
}

TEST_CASE("graph mode: bounds_checked kernels round their grids up, so new shapes set arguments only", "[graph]") {
  // Counts the builds of the host-update policy: no graph built again for device updates.
  ScopedEnv hostUpdates("HOSTJIT_GRAPH_DEVICE_UPDATES", "0");
  // kShapes with both kernels bounds_checked: extents 1 to 2048 make grids
  // of 1 to 8 blocks, which round up to 1, 2, 4 or 8. Two rounds of 48
  // scattered extents, outputs and memsets as eager calls', and records
  // that keep the program's own grids.
  std::string text = kShapes;
  for (const char *host : {"  host = \"scale_vec\"\n", "  host = \"add_vec\"\n"}) {
    size_t at = text.find(host);
    REQUIRE(at != std::string::npos);
    text.insert(at + std::strlen(host), "  bounds_checked = true\n");
  }
  Program checked = parseOk(text, "checked.hir"), plain = parseOk(kShapes, "shapes.hir");
  std::vector<int64_t> extents;
  for (int round = 0; round < 2; ++round)
    for (int i = 0; i < 48; ++i) extents.push_back(1 + (i * 613) % 2048);
  for (bool jit : {false, true}) {
    INFO((jit ? "jit" : "eval"));
    hj_stats stats[2], firstRound[2];
    for (int rounded : {0, 1}) {
      INFO((rounded ? "bounds_checked" : "plain"));
      setenv("HOSTJIT_GRAPH_MIN_LAUNCHES", "0", 1);
      auto eagerRt = makeRuntime(), graphRt = makeRuntime();
      unsetenv("HOSTJIT_GRAPH_MIN_LAUNCHES");
      const Program &p = rounded ? checked : plain;
      Runner eager(p, eagerRt, jit), graph(p, graphRt, jit, OptLevel::O2, /*graph=*/true);
      for (size_t i = 0; i < extents.size(); ++i) {
        callShapes(graph, eager, graphRt, eagerRt, extents[i],
                   [](int64_t j) { return 0.75f + float((j * 37) % 23) / 8.0f; });
        if (i + 1 == extents.size() / 2) firstRound[rounded] = graphRt->stats();
      }
      // A recorded call of 700 elements: grid(3, 1, 1) in both records.
      hj_record_enable(graphRt->context(), 1);
      hj_record_enable(eagerRt->context(), 1);
      callShapes(graph, eager, graphRt, eagerRt, 700, [](int64_t i) { return 2.0f - float(i % 9) / 4.0f; });
      auto rdiff = compareRecords(eagerRt->recordLines(), graphRt->recordLines(), "eager", "graph");
      INFO((rdiff ? *rdiff : ""));
      CHECK(!rdiff);
      bool grid3 = false;
      for (const std::string &line : graphRt->recordLines()) grid3 = grid3 || line.find("grid(3, 1, 1)") != std::string::npos;
      CHECK(grid3);
      stats[rounded] = graphRt->stats();
      CHECK(stats[rounded].graph_fallbacks == 0);
      CHECK(stats[rounded].live_bytes == 0);
    }
    // The first round, every signature new. Plain: they set the grids of
    // the one graph they share (the order is scattered). Rounded: one graph
    // per rounded grid (1, 2, 4 or 8 blocks), every other signature bound
    // to it with new arguments only.
    CHECK(firstRound[0].graph_grid_updates > 48);
    CHECK(firstRound[0].graph_builds == 1);
    CHECK(firstRound[1].graph_grid_updates == 0);
    CHECK(firstRound[1].graph_builds == 4);
    CHECK(firstRound[1].graph_updates > 0);
    // The second: a signature that comes back gets a graph of its own (the
    // cache holds all 48), and no rounded grid is set anew.
    CHECK(stats[1].graph_grid_updates == 0);
    CHECK(stats[0].graph_builds > 8);
    CHECK(stats[1].graph_builds > 8);
    CHECK(stats[1].graph_replays == stats[0].graph_replays);
    // Two graphs per shape: past them, a signature moves to the graph that
    // holds its (rounded) grids, when one does, or sets new grids.
    hj_stats limited[2];
    for (int rounded : {0, 1}) {
      INFO((rounded ? "bounds_checked" : "plain") << ", two graphs per shape");
      setenv("HOSTJIT_GRAPH_MIN_LAUNCHES", "0", 1);
      setenv("HOSTJIT_GRAPHS_PER_SHAPE", "2", 1);
      auto eagerRt = makeRuntime(), graphRt = makeRuntime();
      unsetenv("HOSTJIT_GRAPH_MIN_LAUNCHES");
      unsetenv("HOSTJIT_GRAPHS_PER_SHAPE");
      const Program &p = rounded ? checked : plain;
      Runner eager(p, eagerRt, jit), graph(p, graphRt, jit, OptLevel::O2, /*graph=*/true);
      for (int64_t n : extents)
        callShapes(graph, eager, graphRt, eagerRt, n, [](int64_t i) { return 1.5f - float((i * 11) % 13) / 8.0f; });
      limited[rounded] = graphRt->stats();
      CHECK(limited[rounded].graph_builds == 2);
      CHECK(limited[rounded].graph_fallbacks == 0);
      CHECK(limited[rounded].live_bytes == 0);
    }
    CHECK(limited[1].graph_grid_updates < limited[0].graph_grid_updates);
  }
}

TEST_CASE("graph mode: a program of few launches with a new shape on nearly every call runs eagerly", "[graph]") {
  // Three launches: below HOSTJIT_GRAPH_MIN_LAUNCHES (4). 40 extents, each
  // once, then one extent again and again.
  Program p = parseOk(kShapes, "shapes.hir");
  for (bool jit : {false, true}) {
    INFO((jit ? "jit" : "eval"));
    auto eagerRt = makeRuntime(), graphRt = makeRuntime();
    Runner eager(p, eagerRt, jit), graph(p, graphRt, jit, OptLevel::O2, /*graph=*/true);
    auto call = [&](int64_t n) {
      callShapes(graph, eager, graphRt, eagerRt, n, [](int64_t i) { return 0.75f + float((i * 13) % 29) / 4.0f; });
    };
    for (int i = 0; i < 40; ++i) call(1 + (i * 37) % 700);
    hj_stats s = graphRt->stats();
    // The first 16 calls are traced; after that 7 of 8 new signatures run
    // eagerly, and every eighth is traced still.
    CHECK(s.graph_fallbacks >= 18);
    CHECK(s.graph_fallbacks < 24);
    CHECK(s.graph_replays + s.graph_fallbacks == 40);
    CHECK_THAT(hj_graph_reason(graphRt->context()),
               Catch::StartsWith("graph mode does not pay for this program: 3 launches and a new signature on "));
    CHECK_THAT(hj_graph_outcome(graphRt->context()), Catch::StartsWith("eager: graph mode does not pay"));
    // The same extent again and again: it is traced once in eight, then
    // replays, and the program's calls stop being new signatures.
    for (int i = 0; i < 48; ++i) call(333);
    CHECK_THAT(hj_graph_outcome(graphRt->context()), Catch::StartsWith("fast replay: "));
    CHECK(graphRt->stats().graph_fast >= 30);
    CHECK(graphRt->stats().live_bytes == 0);
  }
}

// y = a0 + a1 + ... + a9, f32[4] each (with `dynamic`, a0..a8 f32[?]).
static Program sum10(bool dynamic) {
  std::string text = "kernel @add_vec(ptr<f32>, ptr<f32>, ptr<f32>, i64) {\n  host = \"add_vec\"\n}\n\nfunc @main(";
  for (int i = 0; i < 10; ++i)
    text += (i ? ", %a" : "%a") + std::to_string(i) + (dynamic && i < 9 ? ": f32[?]" : ": f32[4]");
  text += ") -> (f32[4]) {\n  %y = alloc f32[4]\n  launch @add_vec grid(1, 1, 1) block(4, 1, 1) smem(0) (%a0, %a1, %y, 4)\n";
  for (int i = 2; i < 10; ++i)
    text += "  launch @add_vec grid(1, 1, 1) block(4, 1, 1) smem(0) (%y, %a" + std::to_string(i) + ", %y, 4)\n";
  text += "  return %y\n}\n";
  return parseOk(text, "sum10.hir");
}

TEST_CASE("graph mode: inputs bound once as static are not read per call", "[graph]") {
  // Counts the builds of the host-update policy: no graph built again for device updates.
  ScopedEnv hostUpdates("HOSTJIT_GRAPH_DEVICE_UPDATES", "0");
  // y = a0 + a1 + ... + a9 (f32[4] each); a0..a7 bound, a8 and a9 given
  // anew on every call.
  Program p = sum10(false);
  for (bool useJit : {false, true}) {
    INFO((useJit ? "jit" : "eval"));
    auto rt = makeRuntime();
    std::unique_ptr<CompiledProgram> cp;
    std::optional<Evaluator> ev;
    if (useJit) {
      auto c = sharedJit().compile(p, rt, noCache(OptLevel::O2));
      REQUIRE(c);
      cp = std::move(*c);
    } else {
      auto e = Evaluator::create(p, rt);
      REQUIRE(e);
      ev.emplace(std::move(*e));
    }
    const Executable &x = useJit ? static_cast<const Executable &>(*cp) : *ev;
    hj_context *ctx = rt->context();
    std::vector<Tensor> t;
    std::vector<float> want(4, 0.0f);
    for (int i = 0; i < 10; ++i) {
      std::vector<float> v{float(i + 1), 0.5f * float(i), -2.0f + float(i), 3.25f};
      auto tensor = Tensor::fromHost(rt, {4}, v);
      REQUIRE(tensor);
      t.push_back(std::move(*tensor));
    }
    std::vector<DLTensor> dl;
    for (Tensor &w : t) dl.push_back(w.dl());
    std::vector<const DLTensor *> in;
    for (DLTensor &d : dl) in.push_back(&d);
    std::vector<uint32_t> weights{0, 1, 2, 3, 4, 5, 6, 7};
    auto bound = x.bindStatic(in.data(), weights);
    REQUIRE(bound);
    auto sum = [&](const std::vector<const DLTensor *> &args) {
      std::vector<float> s(4, 0.0f);
      for (const DLTensor *a : args) {
        std::vector<float> v(4);
        REQUIRE(hj_copy_to_host(ctx, v.data(), a->data, 16) == HJ_OK);
        for (int j = 0; j < 4; ++j) s[size_t(j)] += v[size_t(j)];
      }
      return s;
    };
    auto call = [&](const std::vector<const DLTensor *> &args, const StaticInputs *b) {
      void *outData[1] = {};
      int64_t outDims[1] = {};
      int32_t st = x.callGraph(ctx, args.data(), nullptr, outData, outDims, b);
      INFO(hj_last_error());
      REQUIRE(st == HJ_OK);
      std::vector<float> y(4);
      REQUIRE(hj_copy_to_host(ctx, y.data(), outData[0], 16) == HJ_OK);
      REQUIRE(hj_free(ctx, outData[0]) == HJ_OK);
      return y;
    };
    // New buffers for a8 and a9 on every call: patched, the weights not read.
    for (int round = 0; round < 4; ++round) {
      std::vector<float> v8{float(round), 1.0f, 2.0f, 3.0f}, v9{-1.0f, float(2 * round), 0.25f, 8.0f};
      auto a8 = Tensor::fromHost(rt, {4}, v8), a9 = Tensor::fromHost(rt, {4}, v9);
      REQUIRE(a8);
      REQUIRE(a9);
      DLTensor d8 = a8->dl(), d9 = a9->dl();
      std::vector<const DLTensor *> args = in;
      args[8] = &d8;
      args[9] = &d9;
      CHECK(call(args, &*bound) == sum(args));
    }
    CHECK(rt->stats().graph_fast >= 3);
    // An unbound input at a bound one's address: another signature.
    std::vector<const DLTensor *> aliased = in;
    aliased[9] = in[0];
    uint64_t signatures = rt->stats().graph_builds + rt->stats().graph_reuses;
    CHECK(call(aliased, &*bound) == sum(aliased));
    CHECK(rt->stats().graph_builds + rt->stats().graph_reuses == signatures + 1);
    // A weight replaced: bound again, the new values are used.
    std::vector<float> w3{100.0f, 200.0f, 300.0f, 400.0f};
    auto replaced = Tensor::fromHost(rt, {4}, w3);
    REQUIRE(replaced);
    DLTensor d3 = replaced->dl();
    std::vector<const DLTensor *> updated = in;
    updated[3] = &d3;
    auto rebound = x.bindStatic(updated.data(), weights);
    REQUIRE(rebound);
    CHECK(call(updated, &*rebound) == sum(updated));
    CHECK(call(updated, &*rebound) == sum(updated));
    // The same calls without a binding give the same results.
    CHECK(call(updated, nullptr) == sum(updated));
    // Mistakes: an index out of range; a binding of another program.
    auto bad = x.bindStatic(in.data(), std::vector<uint32_t>{3, 10});
    REQUIRE(!bad);
    CHECK(bad.error().message == "bindStatic: input 10 does not exist (the program has 10 tensor inputs)");
    auto other = Evaluator::create(p, rt);
    REQUIRE(other);
    void *outData[1] = {};
    int64_t outDims[1] = {};
    CHECK(other->callGraph(ctx, in.data(), nullptr, outData, outDims, &*bound) == HJ_ERR_INVALID_ARGUMENT);
    CHECK_THAT(hj_last_error(), Catch::Contains("the static inputs were bound for another program"));
    CHECK(rt->stats().live_bytes == 0);  // every output freed
  }
}

TEST_CASE("graph mode: run() with the DLTensors of its last call skips their checks, never a change", "[graph]") {
  // y = a0 + ... + a9 (f32[4] each, a9 static): the DLTensors are made once
  // and the program called in a loop, as a user's C++ code does.
  Program p = sum10(true);
  for (bool useJit : {false, true}) {
    INFO((useJit ? "jit" : "eval"));
    auto rt = makeRuntime();
    Runner r(p, rt, useJit, OptLevel::O2, /*graph=*/true);
    std::vector<Tensor> t;
    std::vector<float> want(4, 0.0f);
    std::mt19937 g(17);
    std::uniform_real_distribution<float> u(0.5f, 2.0f);
    for (int i = 0; i < 10; ++i) {
      std::vector<float> v(4);
      for (int j = 0; j < 4; ++j) want[size_t(j)] += v[size_t(j)] = u(g);
      auto tensor = Tensor::fromHost(rt, {4}, v);
      REQUIRE(tensor);
      t.push_back(std::move(*tensor));
    }
    std::vector<DLTensor> dl;
    for (Tensor &w : t) dl.push_back(w.dl());
    std::vector<const DLTensor *> in;
    for (DLTensor &d : dl) in.push_back(&d);
    for (int call = 0; call < 5; ++call) {
      auto out = r.run(in);
      REQUIRE(out);
      std::vector<float> got = floats((*out)[0]);
      for (int j = 0; j < 4; ++j) CHECK(got[size_t(j)] == Approx(want[size_t(j)]));
    }
    CHECK(rt->stats().graph_fast >= 3);
    // Each change to a DLTensor the last call was given is checked again.
    auto refused = [&](const std::string &message) {
      auto out = r.run(in);
      REQUIRE(!out);
      CHECK(out.error().message == message);
    };
    int64_t five[1] = {5}, two[1] = {2};
    int64_t *shape9 = dl[9].shape;
    dl[9].shape = five;
    refused("argument %a9: dim 0 is 5, expected 4 (f32[4], got shape [5])");
    dl[9].shape = shape9;
    dl[3].strides = two;
    refused("argument %a3: kernel @add_vec takes it as ptr<f32> (parameter 1), which is its data pointer alone, so it "
            "must be contiguous; its stride 0 is 2, expected 1: pass a contiguous copy, or declare the parameter "
            "tensor<f32, 1> to take the strides");
    dl[3].strides = nullptr;
    dl[5].dtype.bits = 64;
    refused("argument %a5: expected dtype f32 (f32[?]), got f64");
    dl[5].dtype.bits = 32;
    dl[7].byte_offset = 2;
    CHECK_THAT(r.run(in).error().message, Catch::StartsWith("argument %a7: its first element is at address "));
    dl[7].byte_offset = 0;
    // A shape array changed in place (same pointer, another value).
    int64_t *shape2 = dl[2].shape;
    int64_t was = shape2[0];
    shape2[0] = -1;
    refused("argument %a2: dim 0 is negative");
    shape2[0] = was;
    // Back as before: the calls run again.
    auto out = r.run(in);
    REQUIRE(out);
    CHECK(floats((*out)[0])[0] == Approx(want[0]));
    // The weights bound once: run() neither checks nor reads them again.
    std::vector<uint32_t> weights{0, 1, 2, 3, 4, 5, 6, 7};
    auto bound = r.exe().bindStatic(in.data(), weights);
    REQUIRE(bound);
    for (int call = 0; call < 4; ++call) {
      auto got = r.exe().run(in, {}, &*bound);
      REQUIRE(got);
      CHECK(floats((*got)[0])[3] == Approx(want[3]));
    }
    // The unbound inputs are checked as always.
    dl[9].shape = five;
    auto refusedBound = r.exe().run(in, {}, &*bound);
    REQUIRE(!refusedBound);
    CHECK(refusedBound.error().message == "argument %a9: dim 0 is 5, expected 4 (f32[4], got shape [5])");
    dl[9].shape = shape9;
    // Binding checks what it binds, naming it.
    dl[4].strides = two;
    auto badBinding = r.exe().bindStatic(in.data(), weights);
    REQUIRE(!badBinding);
    CHECK_THAT(badBinding.error().message, Catch::StartsWith("argument %a4: kernel @add_vec takes it as ptr<f32>"));
    dl[4].strides = nullptr;
    // A binding of another program is refused.
    Runner other(p, rt, useJit, OptLevel::O2, true);
    auto foreign = other.exe().bindStatic(in.data(), weights);
    REQUIRE(foreign);
    auto wrong = r.exe().run(in, {}, &*foreign);
    REQUIRE(!wrong);
    CHECK(wrong.error().message == "@main: the static inputs were bound for another program");
  }
}
