// test_worth_policy.cpp - when graph mode runs a program's new signatures
// eagerly, without a backend: a program of fewer launches than
// HOSTJIT_GRAPH_MIN_LAUNCHES, 16 calls or more, 7 in 8 of them new
// signatures, and a program whose last 4 graph launches captured at least
// HOSTJIT_GRAPH_RECAPTURE_PERCENT of their operations anew, run them
// eagerly but one in eight; cached signatures, a program of more launches,
// one never traced, a launch under the share and the setting 0 never do;
// a signature run eagerly that comes back is traced.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "graph/worth_policy.h"

using hj::WorthPolicy;

TEST_CASE("worth policy: few launches and new signatures on nearly every call run eagerly", "[unit][graph]") {
  WorthPolicy w(4, 0);
  std::string why;
  uint64_t sig = 0;  // a new signature on every call
  auto key = [](uint64_t n) { return std::to_string(n); };
  // Never traced: its launches are unknown, so it is traced.
  for (int i = 0; i < 20; ++i) CHECK_FALSE(w.eager(7, true, key(++sig), &why));
  w.traced(7, 3);
  // 21 calls, all misses: the next misses run eagerly, one in eight traced.
  int eager = 0, calls = 16;
  for (int i = 0; i < calls; ++i) eager += w.eager(7, true, key(++sig), &why);
  CHECK(eager == calls - calls / 8);  // the 36th call traced: the message is the 35th's
  CHECK(why ==
        "graph mode does not pay for this program: 3 launches and a new signature on 35 of its last 35 calls, which "
        "cost less eagerly (HOSTJIT_GRAPH_MIN_LAUNCHES=4)");
  // A cached signature is never run eagerly.
  CHECK_FALSE(w.eager(7, false, key(++sig), &why));
  // Another program, of more launches, is always traced.
  w.traced(9, 4);
  for (int i = 0; i < 40; ++i) CHECK_FALSE(w.eager(9, true, key(++sig), &why));
  // Forgotten: program 7's counts start again.
  w.forget(7);
  w.traced(7, 3);
  for (int i = 0; i < 15; ++i) CHECK_FALSE(w.eager(7, true, key(++sig), &why));
  CHECK(w.eager(7, true, key(++sig), &why));
}

TEST_CASE("worth policy: a window of recent calls; the setting 0 never runs eagerly", "[unit][graph]") {
  WorthPolicy w(4, 0);
  std::string why;
  uint64_t sig = 0;  // a new signature on every call
  auto key = [](uint64_t n) { return std::to_string(n); };
  w.traced(1, 1);
  // Hits on 1 call in 4: more than 1 in 8, so every call is traced.
  for (int i = 0; i < 200; ++i) CHECK_FALSE(w.eager(1, i % 4 == 0 ? false : true, key(++sig), &why));
  // Then only misses: the window (at most 64 calls, halved) forgets the hits.
  int eager = 0;
  for (int i = 0; i < 200; ++i) eager += w.eager(1, true, key(++sig), &why);
  CHECK(eager > 100);
  WorthPolicy never(0, 0);
  never.traced(1, 1);
  for (int i = 0; i < 100; ++i) CHECK_FALSE(never.eager(1, true, key(++sig), &why));
  w.clear();
  for (int i = 0; i < 20; ++i) CHECK_FALSE(w.eager(1, true, key(++sig), &why));  // no launches known again
}

TEST_CASE("worth policy: graph launches that capture a large share of their operations anew run eagerly",
          "[unit][graph]") {
  WorthPolicy w(4, 33);
  std::string why;
  uint64_t sig = 0;  // a new signature on every call
  auto key = [](uint64_t n) { return std::to_string(n); };
  w.traced(5, 135);  // many launches: the first rule never applies
  // Three launches in a row at the share: not yet.
  for (int i = 0; i < 3; ++i) {
    w.launched(5, 135, 73);
    CHECK_FALSE(w.eager(5, true, key(++sig), &why));
  }
  // Under the share (a third of the operations, 44 of 135): the count starts again.
  w.launched(5, 135, 44);
  for (int i = 0; i < 3; ++i) w.launched(5, 135, 73);
  CHECK_FALSE(w.eager(5, true, key(++sig), &why));
  // The fourth: new signatures run eagerly, one in eight still traced.
  w.launched(5, 135, 45);
  int eager = 0;
  for (int i = 0; i < 16; ++i) eager += w.eager(5, true, key(++sig), &why);
  CHECK(eager == 14);
  CHECK(why ==
        "graph mode does not pay for this program: its last 4 graph launches each captured anew 33 % or more of its "
        "operations (the last, 45 of 135: library calls whose sizes or buffers changed), which costs more than "
        "launching them eagerly (HOSTJIT_GRAPH_RECAPTURE_PERCENT=33)");
  // A cached signature is never run eagerly.
  CHECK_FALSE(w.eager(5, false, key(++sig), &why));
  // A traced call whose launch captured little (the sizes stopped
  // changing): graph mode again.
  w.launched(5, 135, 24);
  for (int i = 0; i < 20; ++i) CHECK_FALSE(w.eager(5, true, key(++sig), &why));
  // Another program's launches do not count for this one.
  for (int i = 0; i < 4; ++i) w.launched(6, 10, 10);
  CHECK_FALSE(w.eager(5, true, key(++sig), &why));
  CHECK(w.eager(6, true, key(++sig), &why));
  // The setting 0: never.
  WorthPolicy never(4, 0);
  never.traced(5, 135);
  for (int i = 0; i < 8; ++i) never.launched(5, 135, 135);
  for (int i = 0; i < 20; ++i) CHECK_FALSE(never.eager(5, true, key(++sig), &why));
}

TEST_CASE("worth policy: a signature run eagerly that comes back is traced, so that it replays", "[unit][graph]") {
  // 200 shapes in turn, as a model called over a cycle of sizes: the first
  // round runs 7 in 8 eagerly; in the second each of those comes back and is
  // traced (the others are cached by then: hits).
  WorthPolicy w(4, 33);
  std::string why;
  w.traced(5, 135);
  for (int i = 0; i < 4; ++i) w.launched(5, 135, 73);
  std::vector<bool> traced(201);
  int eager = 0;
  for (uint64_t s = 1; s <= 200; ++s) {
    bool e = w.eager(5, true, std::to_string(s), &why);
    eager += e;
    traced[s] = !e;
  }
  CHECK(eager == 175);
  for (uint64_t s = 1; s <= 200; ++s) CHECK_FALSE(w.eager(5, !traced[s], std::to_string(s), &why));
  // Came back once: remembered no more, so a signature evicted from the
  // cache and seen again is new again.
  int again = 0;
  for (uint64_t s = 1; s <= 16; ++s) again += w.eager(5, true, std::to_string(s), &why);
  CHECK(again == 14);
  // Past 4096 remembered it starts again: the signatures since still come back traced.
  std::vector<uint64_t> ranEagerly;
  for (uint64_t s = 1000; s < 6000; ++s)
    if (w.eager(5, true, std::to_string(s), &why)) ranEagerly.push_back(s);
  REQUIRE(ranEagerly.size() > 4096);
  for (size_t i = ranEagerly.size() - 100; i < ranEagerly.size(); ++i)
    CHECK_FALSE(w.eager(5, true, std::to_string(ranEagerly[i]), &why));
}
