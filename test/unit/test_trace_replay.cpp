// test_trace_replay.cpp - graph mode's trace recorder and replay matcher on
// the host backend, without a graph cache: a trace writes allocations,
// lifetimes and operations with their streams and dependencies; a replay
// against the plan gives planned addresses, sets changed values dirty,
// and a call that differs from the trace is a mismatch whose counters are
// rolled back.
#include <catch2/catch.hpp>

#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "common/host_room.h"
#include "graph/call_order.h"
#include "graph/graph_internal.h"
#include "graph/memory_plans.h"
#include "graph/replay_matcher.h"
#include "graph/signature_cache.h"
#include "graph/trace_recorder.h"

using hj::GraphEntry;
using hj::GraphOpKind;

namespace {

const int64_t kSizes[1] = {256};

hj::AllocCall allocOf(const char *name, uint32_t flags) {
  hj::AllocCall c;
  c.sizes = kSizes;
  c.rank = 1;
  c.dtype = HJ_DTYPE_f32;
  c.flags = flags;
  c.bytes = 256 * 4;
  c.name = name;
  return c;
}

hj::MatmulCall matmulOf(const void *a, void *c, int64_t m) {
  hj::MatmulCall mm;
  mm.a = a;
  mm.b = a;
  mm.c = c;
  mm.m = m;
  mm.n = 16;
  mm.k = 16;
  mm.rowStride[0] = mm.rowStride[1] = mm.rowStride[2] = 16;
  mm.aType = mm.cType = HJ_DTYPE_f32;
  mm.site = "line 3";
  return mm;
}

// Every field of a MatmulCall that is not an address or the site: what a
// replayed multiply must repeat.
std::vector<std::string> matmulValueFields() {
  std::vector<std::string> names;
  hj::MatmulCall().forEachField([&](const char *name, const auto &field) {
    if constexpr (!std::is_pointer_v<std::decay_t<decltype(field)>>) names.push_back(name);
  });
  return names;
}

// `c` with field `name` changed.
hj::MatmulCall changed(hj::MatmulCall c, const std::string &name) {
  c.forEachField([&](const char *n, auto &field) {
    using F = std::decay_t<decltype(field)>;
    if (name != n) return;
    if constexpr (std::is_same_v<F, hj::MatmulCall::Strides>)
      field[1] += 1;
    else if constexpr (std::is_arithmetic_v<F>)
      field += 1;
  });
  return c;
}

// The program: %t (zero_init: a memset), %out (an output), a matmul
// from %t into %out on stream 1, %t freed.
int32_t traceProgram(hj::TraceRecorder &r, hj::CallOrder &order, void **t, void **out) {
  if (int32_t st = r.alloc(allocOf("t", HJ_ALLOC_ZERO_INIT), t)) return st;
  if (int32_t st = r.alloc(allocOf("out", HJ_ALLOC_OUTPUT), out)) return st;
  if (int32_t st = r.setStream(1)) return st;
  if (int32_t st = r.matmul(matmulOf(*t, *out, 16))) return st;
  if (int32_t st = order.setStream(0)) return st;
  return r.free(*t, false);
}

// A recorder, and the program traced into the entry "program".
struct Traced {
  hj::SignatureCache signatures;
  hj::Settings settings;
  hj::CallOrder order;
  hj::TraceRecorder recorder{signatures, settings, order};
  GraphEntry &e = *signatures.insert("program", false);
  void *t = nullptr, *out = nullptr;  // the fake addresses of %t and %out
  Traced() {
    recorder.start(e);
    REQUIRE(traceProgram(recorder, order, &t, &out) == HJ_OK);
    recorder.finish();
    recorder.settle(e);
  }
};

}  // namespace

TEST_CASE("trace recorder: allocations, lifetimes and operations of one call", "[unit][graph]") {
  Traced traced;
  hj::SignatureCache &signatures = traced.signatures;
  hj::CallOrder &order = traced.order;
  hj::TraceRecorder &recorder = traced.recorder;
  GraphEntry &e = traced.e;
  void *t = traced.t;

  REQUIRE(e.allocs.size() == 2);
  const hj::PlannedAlloc &ta = e.allocs[0], &oa = e.allocs[1];
  CHECK(ta.name == "t");
  CHECK_FALSE(ta.output);
  CHECK(ta.op == 0);  // its memset
  CHECK(ta.firstEvent < ta.lastEvent);
  CHECK(ta.lastEvent != SIZE_MAX);
  CHECK(oa.output);
  CHECK(oa.lastEvent == SIZE_MAX);  // returned, never freed
  CHECK(e.peakBytes == 2 * 1024);
  CHECK(e.frees == 1);
  CHECK(e.streams);

  REQUIRE(e.ops.size() == 2);
  CHECK(e.ops[0].kind() == GraphOpKind::Memset);
  CHECK(e.ops[0].stream == 0);
  CHECK(e.ops[1].kind() == GraphOpKind::Library);
  CHECK(e.ops[1].stream == 1);
  CHECK(e.ops[1].deps.empty());  // stream 1 had nothing before it
  void *a = nullptr;
  std::memcpy(&a, e.ops[1].values.data(), sizeof a);
  CHECK(a == t);  // the fake address, patched when the graph is made
  // What a fast replay counts: one intermediate, its memset, one library call.
  CHECK(e.fastAllocs == 1);
  CHECK(e.fastMemsets == 1);
  CHECK(e.libraryCalls == 1);
  CHECK(recorder.uncapturable().empty());

  SECTION("a free of what is no live buffer is an error, ignored on the error path") {
    GraphEntry &f = *signatures.insert("other", false);
    recorder.start(f);
    void *p = nullptr;
    REQUIRE(recorder.alloc(allocOf("x", 0), &p) == HJ_OK);
    REQUIRE(recorder.free(p, false) == HJ_OK);
    CHECK(recorder.free(p, false) == HJ_ERR_INVALID_ARGUMENT);
    CHECK(std::string(hj_last_error()).find("not a live buffer") != std::string::npos);
    CHECK(recorder.free(p, true) == HJ_OK);
  }
  SECTION("a matmul inside a send/receive group is refused, naming it") {
    GraphEntry &f = *signatures.insert("grouped", false);
    recorder.start(f);
    hj::CollectiveCall begin;
    begin.kind = HJ_COLL_GROUP_BEGIN;
    std::string what = "group begin (line 1)";
    begin.what = &what;
    REQUIRE(recorder.collective(begin) == HJ_OK);
    CHECK(order.group() == 0);
    void *p = nullptr;
    REQUIRE(recorder.alloc(allocOf("x", 0), &p) == HJ_OK);
    CHECK(recorder.matmul(matmulOf(p, p, 16)) == HJ_ERR_INVALID_ARGUMENT);
    CHECK(std::string(hj_last_error()).find("a matmul inside a send/receive group") != std::string::npos);
    CHECK(order.setStream(2) == HJ_ERR_INVALID_ARGUMENT);
  }
}

TEST_CASE("replay matcher: planned addresses, dirty values, a mismatch rolled back", "[unit][graph]") {
  Traced traced;
  hj::CallOrder &order = traced.order;
  GraphEntry &e = traced.e;
  {
    hostjit::test::HostRoom room;
    hj_stats &stats = room.stats;
    hj::Buffers &buffers = room.buffers;
    hj::CallRecord &record = room.record;
    hj::MemoryPlans plans(*room.backend, buffers, room.injector, stats);
    REQUIRE(plans.plan(e) == HJ_OK);
    std::string reason;
    hj::ReplayMatcher matcher(buffers, order, record, stats, reason);

    matcher.start(e);
    void *t = nullptr, *out = nullptr;
    REQUIRE(matcher.alloc(allocOf("t", HJ_ALLOC_ZERO_INIT), &t) == HJ_OK);
    CHECK(t == static_cast<char *>(e.shape->block) + e.shape->offset[0]);  // its slot
    // The memset's destination is now the real address: dirty.
    REQUIRE(e.dirty.size() == 1);
    CHECK(e.dirty[0] == 0);
    REQUIRE(matcher.alloc(allocOf("out", HJ_ALLOC_OUTPUT), &out) == HJ_OK);
    REQUIRE(matcher.outputs().size() == 1);
    CHECK(matcher.outputs()[0].first == 1);
    CHECK(matcher.outputs()[0].second == out);
    REQUIRE(order.setStream(1) == HJ_OK);
    REQUIRE(matcher.matmul(matmulOf(t, out, 16)) == HJ_OK);
    CHECK(e.dirty.size() == 2);
    REQUIRE(order.setStream(0) == HJ_OK);
    REQUIRE(matcher.free(t, false) == HJ_OK);
    matcher.checkComplete();
    CHECK_FALSE(matcher.mismatched());
    matcher.freeOutputs(0);
    CHECK(matcher.outputs().empty());

    SECTION("another multiply is a mismatch, and its counts are rolled back") {
      matcher.start(e);
      uint64_t launches = stats.launches;
      REQUIRE(matcher.alloc(allocOf("t", HJ_ALLOC_ZERO_INIT), &t) == HJ_OK);
      REQUIRE(matcher.alloc(allocOf("out", HJ_ALLOC_OUTPUT), &out) == HJ_OK);
      ++stats.launches;  // as the replay path counts what the program does
      REQUIRE(order.setStream(1) == HJ_OK);
      CHECK(matcher.matmul(matmulOf(t, out, 32)) == HJ_ERR_INTERNAL);
      CHECK(matcher.mismatched());
      CHECK(matcher.reason().find("matmul (line 3), operation 2, is another multiply") != std::string::npos);
      matcher.undo();
      CHECK_FALSE(matcher.mismatched());
      CHECK(stats.launches == launches);
      REQUIRE(buffers.free(t, false, 0) == HJ_OK);
      matcher.freeOutputs(0);
    }
    SECTION("a multiply that differs in any field but its addresses is a mismatch") {
      std::vector<std::string> fields = matmulValueFields();
      CHECK(fields.size() == 12);
      for (const std::string &name : fields) {
        INFO("field " << name);
        matcher.start(e);
        REQUIRE(matcher.alloc(allocOf("t", HJ_ALLOC_ZERO_INIT), &t) == HJ_OK);
        REQUIRE(matcher.alloc(allocOf("out", HJ_ALLOC_OUTPUT), &out) == HJ_OK);
        REQUIRE(order.setStream(1) == HJ_OK);
        CHECK(matcher.matmul(changed(matmulOf(t, out, 16), name)) == HJ_ERR_INTERNAL);
        CHECK(matcher.mismatched());
        matcher.undo();
        REQUIRE(buffers.free(t, false, 0) == HJ_OK);
        matcher.freeOutputs(0);
      }
      // The same multiply at other addresses, from another site, matches.
      matcher.start(e);
      REQUIRE(matcher.alloc(allocOf("t", HJ_ALLOC_ZERO_INIT), &t) == HJ_OK);
      REQUIRE(matcher.alloc(allocOf("out", HJ_ALLOC_OUTPUT), &out) == HJ_OK);
      REQUIRE(order.setStream(1) == HJ_OK);
      hj::MatmulCall moved = matmulOf(out, t, 16);
      moved.site = "line 9";
      CHECK(matcher.matmul(moved) == HJ_OK);
      REQUIRE(order.setStream(0) == HJ_OK);
      REQUIRE(matcher.free(t, false) == HJ_OK);
      matcher.checkComplete();
      CHECK_FALSE(matcher.mismatched());
      matcher.freeOutputs(0);
    }
    SECTION("a program that stops early is a mismatch naming the counts") {
      matcher.start(e);
      REQUIRE(matcher.alloc(allocOf("t", HJ_ALLOC_ZERO_INIT), &t) == HJ_OK);
      matcher.checkComplete();
      CHECK(matcher.mismatched());
      CHECK(matcher.reason().find("made 1 of 2 allocations and 1 of 2 operations") != std::string::npos);
      matcher.undo();
      REQUIRE(buffers.free(t, false, 0) == HJ_OK);
    }
    SECTION("an allocation of other extents is a mismatch") {
      matcher.start(e);
      hj::AllocCall other = allocOf("t", HJ_ALLOC_ZERO_INIT);
      const int64_t sizes[1] = {128};
      other.sizes = sizes;
      other.bytes = 512;
      CHECK(matcher.alloc(other, &t) == HJ_ERR_INTERNAL);
      CHECK(matcher.reason().find("buffer %t, allocation 1, has other extents") != std::string::npos);
      matcher.undo();
    }
    plans.release(e.shape);
  }
}

TEST_CASE("graph mode keys every field of a multiply: its shape of work or its node's sizes", "[unit][graph]") {
  hostjit::test::HostRoom room;
  hj::MemoryPlans plans(*room.backend, room.buffers, room.injector, room.stats);
  auto entryOf = [](const hj::MatmulCall &c) {
    GraphEntry e;
    e.ops.emplace_back().work = hj::PlannedLibrary{c};
    return e;
  };
  hj::MatmulCall base = matmulOf(nullptr, nullptr, 16);
  GraphEntry b = entryOf(base);
  REQUIRE(plans.plan(b) == HJ_OK);
  int64_t baseSizes[10];
  hj::matmulSizes(b.ops[0], baseSizes);
  for (const std::string &name : matmulValueFields()) {
    INFO("field " << name);
    GraphEntry c = entryOf(changed(base, name));
    REQUIRE(plans.plan(c) == HJ_OK);
    int64_t sizes[10];
    hj::matmulSizes(c.ops[0], sizes);
    bool otherShape = c.shape != b.shape, otherSizes = std::memcmp(sizes, baseSizes, sizeof sizes) != 0;
    // Exactly one: a field in both would be set twice, one in neither
    // would let a graph launch another multiply.
    CHECK(otherShape != otherSizes);
    if (c.shape != b.shape) plans.release(c.shape);
  }
  plans.release(b.shape);
}
