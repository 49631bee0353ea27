// test_streams.cpp - streams and events: what the program's record says,
// per-stream pool caches and zeroed arenas, deferred frees of buffers that
// another stream used, graph mode's edges between streams, and the verifier's
// rules.
#include "helpers.h"

#include <algorithm>
#include <cstring>

#include "hostjit/exec/parity.h"

using namespace hostjit;
using namespace hostjit::test;

namespace {

const std::string kStreams = std::string(HOSTJIT_SOURCE_DIR) + "/test/programs/streams.hir";

bool has(const std::vector<std::string> &lines, const std::string &text) {
  return std::any_of(lines.begin(), lines.end(), [&](const std::string &l) { return l.find(text) != std::string::npos; });
}


}  // namespace

TEST_CASE("streams: test/programs/streams.hir computes its outputs and records its stream calls", "[streams]") {
  Program p = parseOk(readFile(kStreams), kStreams);
  for (bool jit : {false, true}) {
    INFO((jit ? "jit" : "eval"));
    auto rt = makeRuntime();
    Runner runner(p, rt, jit);
    auto in = InputSet::random(rt, runner.plan(), {{"x", {4, 3}}}, 9);
    REQUIRE(in);
    hj_record_enable(rt->context(), 1);
    auto out = runner.run(in->span());
    INFO((out ? "" : out.error().message));
    REQUIRE(out);
    std::vector<float> x(12);
    std::memcpy(x.data(), in->hostData(0).data(), sizeof(float) * 12);
    std::vector<float> y = floats((*out)[0]), z = floats((*out)[1]), w = floats((*out)[2]);
    for (size_t i = 0; i < 12; ++i) {
      CHECK(y[i] == x[i]);
      CHECK(z[i] == x[i] * 2.0f);
      CHECK(w[i] == z[i]);
    }
    std::vector<std::string> rec = rt->recordLines();
    CHECK(rec.front().find("alloc") == 0);  // %y, on the main stream
    CHECK(has(rec, "record event 0"));
    CHECK(has(rec, "stream 1"));
    CHECK(has(rec, "wait event 0 on stream 1"));
    CHECK(has(rec, "alloc #2 %z f32 bytes=48 zero_init output on stream 1"));
    CHECK(has(rec, "use #1 %y on stream 1"));   // %y belongs to the main stream
    CHECK(has(rec, "record event 1 on stream 1"));
    CHECK(has(rec, "wait event 1"));
    CHECK(has(rec, "use #2 %z"));               // %z belongs to the side stream
    CHECK(has(rec, "sync on stream 1"));
    CHECK(rec.back().find("stream 0") == 0);    // the program ends on the main stream
    hj_stats st = rt->stats();
    CHECK(st.event_records == 2);
    CHECK(st.event_waits == 2);
    CHECK(st.arena_growths == 1);  // the semaphores: the side stream's arena
    out->clear();                  // %y and %z were used on the other stream
    CHECK(rt->stats().deferred_frees == 2);
    CHECK(rt->stats().live_bytes == 0);
  }
}

TEST_CASE("streams: pool caches and zeroed arenas are per stream", "[streams]") {
  auto rt = makeRuntime();
  hj_context *ctx = rt->context();
  int64_t n = 64;
  void *a = nullptr, *b = nullptr, *c = nullptr;
  REQUIRE(hj_set_stream(ctx, 1) == HJ_OK);
  REQUIRE(hj_alloc(ctx, &n, nullptr, 1, HJ_DTYPE_f32, 0, "a", &a) == HJ_OK);
  REQUIRE(hj_free(ctx, a) == HJ_OK);
  REQUIRE(hj_set_stream(ctx, 0) == HJ_OK);
  REQUIRE(hj_alloc(ctx, &n, nullptr, 1, HJ_DTYPE_f32, 0, "b", &b) == HJ_OK);
  CHECK(b != a);  // stream 1's block is not handed to stream 0
  REQUIRE(hj_set_stream(ctx, 1) == HJ_OK);
  uint64_t hits = rt->stats().pool_hits;
  REQUIRE(hj_alloc(ctx, &n, nullptr, 1, HJ_DTYPE_f32, 0, "c", &c) == HJ_OK);
  CHECK(c == a);  // stream 1 reuses its own
  CHECK(rt->stats().pool_hits == hits + 1);
  // resets_to_zero buffers: one arena per stream, each zeroed once.
  void *z1 = nullptr, *z0 = nullptr;
  uint32_t flags = HJ_ALLOC_ZERO_INIT | HJ_ALLOC_RESETS_TO_ZERO;
  REQUIRE(hj_alloc(ctx, &n, nullptr, 1, HJ_DTYPE_i32, flags, "z1", &z1) == HJ_OK);
  REQUIRE(hj_set_stream(ctx, 0) == HJ_OK);
  REQUIRE(hj_alloc(ctx, &n, nullptr, 1, HJ_DTYPE_i32, flags, "z0", &z0) == HJ_OK);
  CHECK(rt->stats().arena_growths == 2);
  REQUIRE(hj_free(ctx, z0) == HJ_OK);
  REQUIRE(hj_free(ctx, z1) == HJ_OK);
  REQUIRE(hj_free(ctx, b) == HJ_OK);
  REQUIRE(hj_free(ctx, c) == HJ_OK);
  int32_t zero = 0;
  REQUIRE(hj_arena_check_zero(ctx, &zero) == HJ_OK);
  CHECK(zero == 1);
  CHECK(hj_set_stream(ctx, 64) == HJ_ERR_INVALID_ARGUMENT);
  CHECK(std::string(hj_last_error()) == "hj_set_stream: stream 64, expected 0 to 63");
  CHECK(hj_event_record(ctx, 4096) == HJ_ERR_INVALID_ARGUMENT);
  CHECK(hj_record_use(ctx, &zero) == HJ_ERR_INVALID_ARGUMENT);
}

TEST_CASE("streams: a buffer used on another stream is held until that work has passed", "[streams]") {
  auto rt = makeRuntime();
  hj_context *ctx = rt->context();
  int64_t n = 256;
  void *a = nullptr, *b = nullptr;
  REQUIRE(hj_alloc(ctx, &n, nullptr, 1, HJ_DTYPE_f32, 0, "a", &a) == HJ_OK);  // stream 0
  REQUIRE(hj_set_stream(ctx, 2) == HJ_OK);
  REQUIRE(hj_record_use(ctx, a) == HJ_OK);  // work on stream 2 uses it
  REQUIRE(hj_set_stream(ctx, 0) == HJ_OK);
  REQUIRE(hj_free(ctx, a) == HJ_OK);
  CHECK(rt->stats().deferred_frees == 1);
  CHECK(rt->stats().live_bytes == 0);
  // The host backend's work is done when it is queued: the next allocation
  // finds the event complete and takes the block back.
  REQUIRE(hj_alloc(ctx, &n, nullptr, 1, HJ_DTYPE_f32, 0, "b", &b) == HJ_OK);
  CHECK(b == a);
  REQUIRE(hj_free(ctx, b) == HJ_OK);
  CHECK(rt->stats().deferred_frees == 1);  // b was not used elsewhere
}

namespace {

// The side stream copies %a, which the main stream writes, into the output:
// with `wait`, after the write; without, in any order.
std::string sideCopy(bool wait) {
  return std::string(R"(
kernel @copy_f32(ptr<f32>, ptr<f32>, i64) {
  host = "copy_f32"
}

func @main(%x: f32[?]) -> (f32[?]) {
  %n = size %x, 0
  %side = stream
  %a = alloc f32[%n]
  launch @copy_f32 grid(1, 1, 1) block(1, 1, 1) smem(0) (%x, %a, %n)
  %written = record
  %y = alloc f32[%n]
  on %side {
)") + (wait ? "    wait %written\n" : "") + R"(    launch @copy_f32 grid(1, 1, 1) block(1, 1, 1) smem(0) (%a, %y, %n)
    %copied = record
  }
  wait %copied
  free %a
  return %y
}
)";
}

// Sets HOSTJIT_GRAPH_SHUFFLE while it lives (graphs built meanwhile run
// their nodes in a random order that keeps their dependencies).
struct Shuffle {
  explicit Shuffle(int seed) { setenv("HOSTJIT_GRAPH_SHUFFLE", std::to_string(seed).c_str(), 1); }
  ~Shuffle() { unsetenv("HOSTJIT_GRAPH_SHUFFLE"); }
};

}  // namespace

TEST_CASE("streams: graph mode makes streams and events edges of one graph; a stream's own buffers share memory",
          "[streams][graph]") {
  Program p = parseOk(readFile(kStreams), kStreams);
  for (bool jit : {false, true}) {
    INFO((jit ? "jit" : "eval"));
    auto eagerRt = makeRuntime();
    Runner eager(p, eagerRt, jit);
    auto in = InputSet::random(eagerRt, eager.plan(), {{"x", {6, 5}}}, 4);
    REQUIRE(in);
    auto want = eager.run(in->span());
    REQUIRE(want);
    for (int seed = 1; seed <= 12; ++seed) {
      INFO("HOSTJIT_GRAPH_SHUFFLE=" << seed);
      Shuffle shuffle(seed);
      auto rt = makeRuntime();
      Runner runner(p, rt, jit, OptLevel::O2, true);
      for (int i = 0; i < 3; ++i) {
        auto out = runner.run(in->span());
        REQUIRE(out);
        auto diff = compareOutputs(*out, *want);
        INFO((diff ? *diff : ""));
        CHECK(!diff);
      }
      hj_stats s = rt->stats();
      CHECK(s.graph_builds == 1);
      CHECK(s.graph_replays == 3);
      CHECK(s.graph_fallbacks == 0);
      CHECK(s.graph_fast == 2);
      // 6 rows, each a scratch row, a semaphore and a count, all on the
      // side stream only: the rows share one 256-byte slot of the plan
      // (scratch and count never live together), the semaphores another.
      CHECK(s.graph_bytes == 2 * 256);
    }
  }
}

TEST_CASE("streams: under HOSTJIT_GRAPH_SHUFFLE a missing wait changes the result, as it may on a GPU",
          "[streams][graph]") {
  // Counts the builds of the host-update policy: no graph built again for device updates.
  ScopedEnv hostUpdates("HOSTJIT_GRAPH_DEVICE_UPDATES", "0");
  for (bool wait : {true, false}) {
    INFO((wait ? "with wait" : "without wait"));
    Program p = parseOk(sideCopy(wait));
    Shuffle shuffle(7);
    auto rt = makeRuntime();
    Runner runner(p, rt, true, OptLevel::O2, true);
    int wrong = 0;
    for (uint64_t call = 0; call < 16; ++call) {
      auto in = InputSet::random(rt, runner.plan(), {{"x", {64}}}, 100 + call);  // new values every call
      REQUIRE(in);
      auto out = runner.run(in->span());
      REQUIRE(out);
      std::vector<float> x(64);
      std::memcpy(x.data(), in->hostData(0).data(), 64 * sizeof(float));
      if (floats((*out)[0]) != x) ++wrong;
    }
    CHECK(rt->stats().graph_builds == 1);
    if (wait)
      CHECK(wrong == 0);
    else
      CHECK(wrong > 0);
  }
}

TEST_CASE("streams: the verifier's rules for streams and events", "[streams][verifier]") {
  const std::string head = "kernel @k(ptr<f32>, i64) {\n  host = \"empty\"\n}\nfunc @main(%x: f32[?]) -> () {\n";
  auto v = verifierProblems(head +
                            "  %s = stream\n"                                      // 5
                            "  %e = record\n"                                      // 6
                            "  %n = add %s, 1\n"                                   // 7
                            "  on %e {\n"                                          // 8
                            "    wait %s\n"                                        // 9
                            "    launch @k grid(1, 1, 1) block(1, 1, 1) smem(0) (%x, %e)\n"  // 10
                            "  }\n"
                            "  on %s {\n"                                          // 12
                            "    return\n"                                         // 13
                            "  }\n"
                            "}\n");
  REQUIRE(v.size() == 6);
  CHECK(v[0] == "7:12: %s is a stream; only 'on' takes a stream and only 'wait' an event");
  CHECK(v[1] == "8:6: 'on' expects a stream; %e is an event");
  CHECK(v[2] == "9:10: 'wait' expects an event; %s is a stream");
  CHECK(v[3] == "10:57: %e is an event; only 'on' takes a stream and only 'wait' an event");
  CHECK(v[4] == "13:5: 'return' inside an 'on' block; it must be the last statement of the function");
  CHECK(v[5].find("must end with 'return'") != std::string::npos);
}

namespace {

// A program of the repository with its whole body on a stream of its own:
// `%side = stream` and `on %side {` after the function's '{', the block's '}'
// before `return`.
Program onSideStream(const std::string &file) {
  std::string text = readFile(file);
  size_t open = text.find("{\n", text.find("func @main"));
  size_t ret = text.rfind("  return");
  REQUIRE(open != std::string::npos);
  REQUIRE(ret != std::string::npos);
  text.insert(ret, "  }\n");
  text.insert(open + 2, "  %side = stream\n  on %side {\n");
  return parseOk(text, file);
}

}  // namespace

TEST_CASE("streams: the allocation contract on two streams: caches, one arena memset per stream, errors free all",
          "[streams][runtime]") {
  const std::string src = std::string(HOSTJIT_SOURCE_DIR);
  Program main = parseOk(readFile(src + "/examples/grid_sum.hir"), "grid_sum.hir");
  Program side = onSideStream(src + "/examples/grid_sum.hir");
  Program pipeSide = onSideStream(src + "/examples/pipeline.hir");
  for (bool jit : {false, true}) {
    INFO((jit ? "jit" : "eval"));
    auto rt = makeRuntime();
    Runner onMain(main, rt, jit), onSide(side, rt, jit), pipeline(pipeSide, rt, jit);
    auto in = InputSet::random(rt, onMain.plan(), {{"x", {100, 37}}}, 3);
    REQUIRE(in);
    // Points 1 and 3: alternating streams, 100 calls each: each stream's pool
    // serves its own calls, each stream's arena is zeroed once.
    std::vector<float> sums;
    for (int i = 0; i < 100; ++i)
      for (Runner *r : {&onMain, &onSide}) {
        auto out = r->run(in->span());
        REQUIRE(out);
        sums.push_back(floats((*out)[0])[0]);
      }
    for (float s : sums) CHECK(s == sums.front());
    hj_stats st = rt->stats();
    CHECK(st.launches == 200);
    CHECK(st.arena_growths == 2);  // one arena per stream
    CHECK(st.memsets == 2);        // each zeroed once
    CHECK(st.live_bytes == 0);
    // Point 4 on stream 1: a zero_init buffer without resets_to_zero is one
    // memset per call.
    auto pin = InputSet::random(rt, pipeline.plan(), {{"x", {5, 300}}}, 4);
    REQUIRE(pin);
    ScalarArg alpha = ScalarArg::f32(0.5f);
    for (int i = 0; i < 10; ++i) REQUIRE(pipeline.run(pin->span(), {&alpha, 1}));
    CHECK(rt->stats().memsets == 2 + 10);
    // Point 8 on stream 1: a failure midway frees everything, the arena stays
    // zero, and the next call works.
    hj_inject_failure(rt->context(), 4);
    CHECK(!onSide.run(in->span()));
    CHECK(rt->stats().live_bytes == 0);
    int32_t zero = 0;
    REQUIRE(hj_arena_check_zero(rt->context(), &zero) == HJ_OK);
    CHECK(zero == 1);
    auto again = onSide.run(in->span());
    REQUIRE(again);
    CHECK(floats((*again)[0])[0] == sums.front());
  }
}

TEST_CASE("streams: out of memory, the retry takes back buffers whose free was deferred", "[streams][graph]") {
  // A 768 KiB buffer used on stream 2 and freed: its free is deferred. A
  // graph's 512 KiB plan does not fit under the 1 MiB limit beside it; the
  // retry waits for the device, takes it back and releases it.
  Program p = parseOk(R"(
kernel @copy_f32(ptr<f32>, ptr<f32>, i64) {
  host = "copy_f32"
}

func @main(%x: f32[?]) -> (f32[?]) {
  %n = size %x, 0
  %t = alloc f32[131072]
  launch @copy_f32 grid(1, 1, 1) block(1, 1, 1) smem(0) (%x, %t, %n)
  %y = alloc f32[%n]
  launch @copy_f32 grid(1, 1, 1) block(1, 1, 1) smem(0) (%t, %y, %n)
  free %t
  return %y
}
)");
  auto rt = makeRuntime(testOptions((1 << 20) + (64 << 10)));
  hj_context *ctx = rt->context();
  Runner runner(p, rt, true, OptLevel::O2, true);
  auto in = InputSet::random(rt, runner.plan(), {{"x", {4}}}, 8);
  REQUIRE(in);
  int64_t n = 196608;
  void *a = nullptr;
  REQUIRE(hj_alloc(ctx, &n, nullptr, 1, HJ_DTYPE_f32, 0, "a", &a) == HJ_OK);
  REQUIRE(hj_set_stream(ctx, 2) == HJ_OK);
  REQUIRE(hj_record_use(ctx, a) == HJ_OK);
  REQUIRE(hj_set_stream(ctx, 0) == HJ_OK);
  REQUIRE(hj_free(ctx, a) == HJ_OK);
  REQUIRE(rt->stats().deferred_frees == 1);
  auto out = runner.run(in->span());
  INFO((out ? "" : out.error().message));
  REQUIRE(out);
  std::vector<float> x(4);
  std::memcpy(x.data(), in->hostData(0).data(), sizeof(float) * 4);
  CHECK(floats((*out)[0]) == x);
  CHECK(rt->stats().graph_bytes == 512 << 10);
  CHECK(rt->stats().reserved_bytes <= (1 << 20) + (64 << 10));
}

TEST_CASE("streams: graph mode: a buffer another stream used never shares memory with a later one", "[streams][graph]") {
  // %a is read on the side stream; after its free, %b (main stream) is
  // written with other values. Nothing orders that write after the read,
  // so %b must not take %a's memory: the plan holds both.
  Program p = parseOk(R"(
kernel @copy_f32(ptr<f32>, ptr<f32>, i64) {
  host = "copy_f32"
}

kernel @fill_rank(ptr<f32>, i64, i64) {
  host = "fill_rank"
}

func @main(%x: f32[?]) -> (f32[?], f32[?]) {
  %n = size %x, 0
  %side = stream
  %a = alloc f32[%n]
  launch @copy_f32 grid(1, 1, 1) block(1, 1, 1) smem(0) (%x, %a, %n)
  %ready = record
  %y = alloc f32[%n]
  on %side {
    wait %ready
    launch @copy_f32 grid(1, 1, 1) block(1, 1, 1) smem(0) (%a, %y, %n)
    %done = record
  }
  free %a
  %b = alloc f32[%n]
  launch @fill_rank grid(1, 1, 1) block(1, 1, 1) smem(0) (%b, %n, 3)
  %z = alloc f32[%n]
  launch @copy_f32 grid(1, 1, 1) block(1, 1, 1) smem(0) (%b, %z, %n)
  free %b
  wait %done
  return %y, %z
}
)");
  for (int seed = 1; seed <= 12; ++seed) {
    INFO("HOSTJIT_GRAPH_SHUFFLE=" << seed);
    Shuffle shuffle(seed);
    auto rt = makeRuntime();
    Runner runner(p, rt, true, OptLevel::O2, true);
    auto in = InputSet::random(rt, runner.plan(), {{"x", {64}}}, 12);
    REQUIRE(in);
    std::vector<float> x(64);
    std::memcpy(x.data(), in->hostData(0).data(), sizeof(float) * 64);
    for (int call = 0; call < 3; ++call) {
      auto out = runner.run(in->span());
      REQUIRE(out);
      CHECK(floats((*out)[0]) == x);
      CHECK(floats((*out)[1])[1] == 3002.0f);  // fill_rank: rank * 1000 + i + 1
    }
    CHECK(rt->stats().graph_bytes == 2 * 256);
  }
}

TEST_CASE("streams: joins with a caller's stream: the host backend takes only NULL, and records nothing",
          "[streams]") {
  auto rt = makeRuntime();
  hj_context *ctx = rt->context();
  hj_record_enable(ctx, 1);
  CHECK(hj_stream_after_native(ctx, nullptr) == HJ_OK);
  CHECK(hj_native_after_stream(ctx, nullptr) == HJ_OK);
  CHECK(hj_record_size(ctx) == 0);
  int dummy = 0;
  CHECK(hj_stream_after_native(ctx, &dummy) == HJ_ERR_INVALID_ARGUMENT);
  CHECK(std::string(hj_last_error()).find("hj_stream_after_native: the host backend has no streams; expected NULL") ==
        0);
  CHECK(hj_native_after_stream(ctx, &dummy) == HJ_ERR_INVALID_ARGUMENT);
  CHECK(std::string(hj_last_error()).find("hj_native_after_stream: the host backend has no streams") == 0);
  CHECK(hj_stream_after_native(nullptr, nullptr) == HJ_ERR_INVALID_ARGUMENT);
  hj_stats s;
  hj_get_stats(ctx, &s);
  CHECK(s.event_records == 0);
  CHECK(s.event_waits == 0);
}
