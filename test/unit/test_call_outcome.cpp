// test_call_outcome.cpp - hj_graph_outcome's words from what a call did,
// without a backend: counters taken from the stats at the call's start.
#include <catch2/catch.hpp>

#include "graph/call_outcome.h"

using hj::CallOutcome;

TEST_CASE("call outcome: each way in words, counted from the call's start", "[unit][graph]") {
  CallOutcome o;
  hj_stats start{};
  start.graph_updates = 10;
  start.graph_device_updates = 4;
  start.graph_builds = 2;
  start.graph_replans = 1;
  CHECK(o.text(start, "", -1).empty());  // no call yet
  o.start(start);
  CHECK(o.text(start, "not capturable", -1) == "eager: not capturable");
  hj_stats now = start;
  now.graph_updates = 13;
  now.graph_device_updates = 6;
  o.way(CallOutcome::Way::Fast);
  CHECK(o.text(now, "", -1) == "fast replay: 3 nodes updated (2 at launch)");
  o.rebuilt(CallOutcome::Rebuilt::NoDevice);
  CHECK(o.text(now, "", -1) ==
        "fast replay: graph built again to take its node updates at launch, which its backend could not give it");
  o.start(now);
  o.way(CallOutcome::Way::Replay);
  o.ranBecause("the call is recorded");
  CHECK(o.text(now, "", -1) == "replay that ran the program (the call is recorded): 0 nodes updated");
  o.start(now);
  o.way(CallOutcome::Way::New);
  hj_stats built = now;
  built.graph_builds = now.graph_builds + 1;
  built.graph_replans = now.graph_replans + 1;
  CHECK(o.text(built, "", -1) == "new signature: graph built, memory plan grown");
  o.ranBecause("its graph is not yet built");
  CHECK(o.text(now, "", -1) ==
        "new signature: bound to a cached graph of its shape of work, 0 nodes updated; the program ran again (its "
        "graph is not yet built)");
  o.start(now);
  o.way(CallOutcome::Way::Reserved);
  CHECK(o.text(built, "", 4096) == "reserved: the memory plan of its shape of work holds 4096 bytes (grown)");
  CHECK(o.text(now, "", -1) == "reserved");
  CHECK(o.text(now, "too few launches", -1) == "reserved: its calls run eagerly: too few launches");
}
