// test_op_order.cpp - the edges between a graph-mode call's operations,
// without a backend: one stream in order; a second stream independent of
// the first until an event's wait or a stream sync joins them; a stream
// first used after a sync follows it; collectives in program order.
#include <catch2/catch.hpp>

#include <vector>

#include "graph/op_order.h"

using hj::OpOrder;
using Deps = std::vector<uint32_t>;

TEST_CASE("op order: streams, events, syncs and collectives", "[unit][graph]") {
  OpOrder o;
  CHECK(o.stream() == 0);
  CHECK(o.frontier().empty());
  o.placed(0);  // op 0 on stream 0
  CHECK(o.frontier() == Deps{0});
  o.event(3, false);  // record event 3 after op 0
  o.placed(1);        // op 1 on stream 0
  o.setStream(1);
  CHECK(o.frontier().empty());  // stream 1 waits for nothing yet
  o.event(3, true);             // stream 1 waits for event 3
  CHECK(o.frontier() == Deps{0});
  o.placed(2);
  CHECK(o.frontier() == Deps{2});
  // A wait for an event never recorded adds nothing.
  o.event(9, true);
  CHECK(o.frontier() == Deps{2});
  // A sync of stream 1: every stream's next operation follows op 2.
  o.streamSync();
  CHECK(o.frontier() == Deps{2});
  o.setStream(0);
  CHECK(o.frontier() == Deps{1, 2});
  // A stream used for the first time after the sync starts after it.
  o.setStream(4);
  CHECK(o.frontier() == Deps{2});
  // Collectives follow each other, whatever their streams.
  o.collective(5);
  o.placed(5);
  o.setStream(0);
  o.collective(6);
  CHECK(o.frontier() == Deps{1, 2, 5});
  o.reset();
  CHECK(o.stream() == 0);
  CHECK(o.frontier().empty());
  o.collective(0);  // the first collective of a call follows none
  CHECK(o.frontier().empty());
}
