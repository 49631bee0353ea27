// test_memory_plans.cpp - graph mode's memory plans on the host backend,
// without a graph cache: signatures of one shape of work share a plan,
// one that needs more grows it (a new block, the epoch counted, the old
// block given back), the zeroed part is zero, and a released shape gives
// its bytes back.
#include <catch2/catch.hpp>

#include <cstring>
#include <memory>

#include "common/host_room.h"
#include "graph/memory_plans.h"

using hj::GraphEntry;
using hj::MemoryPlans;
using hj::PlannedAlloc;

namespace {

// Two intermediates that live at once, the second zeroed (resets_to_zero).
GraphEntry entry(uint64_t general, uint64_t zeroed) {
  GraphEntry e;
  PlannedAlloc a;
  a.bytes = general;
  a.firstEvent = 0, a.lastEvent = 3;
  e.allocs.push_back(a);
  PlannedAlloc z;
  z.bytes = zeroed;
  z.zeroed = true;
  z.firstEvent = 1, z.lastEvent = 2;
  e.allocs.push_back(z);
  return e;
}

}  // namespace

TEST_CASE("memory plans: one plan per shape of work, grown for a signature that needs more", "[unit][graph]") {
  hostjit::test::HostRoom room;
  hj_stats &stats = room.stats;
  std::unique_ptr<hj::Backend> &backend = room.backend;
  {
    MemoryPlans plans(*backend, room.buffers, room.injector, stats);
    GraphEntry small = entry(1000, 64), same = entry(900, 60), large = entry(5000, 64);
    REQUIRE(plans.plan(small) == HJ_OK);
    hj::GraphShape *s = small.shape;
    REQUIRE(s);
    CHECK(MemoryPlans::shared(*s));
    CHECK(s->users == 1);
    CHECK(s->epoch == 1);
    CHECK(s->zeroedBytes >= 64);
    uint64_t first = s->blockBytes;
    CHECK(stats.graph_bytes == first);
    bool zero = true;
    REQUIRE(plans.checkZero(&zero) == HJ_OK);
    CHECK(zero);
    // Fits: the same plan, not grown.
    REQUIRE(plans.plan(same) == HJ_OK);
    CHECK(same.shape == s);
    CHECK(s->users == 2);
    CHECK(s->epoch == 1);
    // Needs more: grown in place of the old block (a replan), the slots
    // of the others kept at least as large.
    REQUIRE(plans.plan(large) == HJ_OK);
    CHECK(large.shape == s);
    CHECK(s->epoch == 2);
    CHECK(s->capacity[0] >= 5000);
    CHECK(s->blockBytes > first);
    CHECK(stats.graph_replans == 1);
    CHECK(stats.graph_bytes == s->blockBytes);
    // The zeroed part, written, is no longer zero.
    unsigned char one = 1;
    REQUIRE(backend->copyFromHost(static_cast<char *>(s->block) + s->zeroedOffset, &one, 1) == HJ_OK);
    REQUIRE(plans.checkZero(&zero) == HJ_OK);
    CHECK_FALSE(zero);
    // Another shape: the second buffer's lifetime differs.
    GraphEntry other = entry(100, 8);
    other.allocs[1].lastEvent = 3;
    REQUIRE(plans.plan(other) == HJ_OK);
    CHECK(other.shape != s);
    // Released: their bytes go back.
    plans.release(other.shape);
    plans.release(s);
    CHECK(stats.graph_bytes == 0);
  }
}
