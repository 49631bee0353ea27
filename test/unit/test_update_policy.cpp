// test_update_policy.cpp - when graph mode builds a graph again for device
// updates or back for host updates (HOSTJIT_GRAPH_DEVICE_UPDATES), without
// a backend: 4 of the last 8 launches needing updates ask for device
// updates once; a graph taking them that finds the device behind goes back
// to host updates for good, unless a grid changed in its last 8 launches;
// kAlways and kNever never rebuild.
#include <catch2/catch.hpp>

#include "graph/update_policy.h"

using hj::Settings;
using hj::UpdatePolicy;
using Rebuild = UpdatePolicy::Rebuild;

namespace {

auto never = [] { return false; };

}  // namespace

TEST_CASE("update policy: device updates after 4 of 8 launches needed updates", "[unit][graph]") {
  UpdatePolicy p;
  CHECK_FALSE(p.wantDevice(Settings::kAuto));
  CHECK(p.wantDevice(Settings::kAlways));
  CHECK_FALSE(p.wantDevice(Settings::kNever));
  // Updates on launches 1, 3 and 5: three of the last eight.
  for (bool updates : {true, false, true, false, true, false})
    CHECK(p.beforeLaunch(Settings::kAuto, updates, false, never) == Rebuild::No);
  // A launch without updates never rebuilds, even with enough behind it.
  CHECK(p.beforeLaunch(Settings::kAuto, false, false, never) == Rebuild::No);
  CHECK(p.beforeLaunch(Settings::kAuto, true, false, never) == Rebuild::ForDevice);
  CHECK(p.wantDevice(Settings::kAuto));
  // Asked once: a backend that could not give them is not asked again.
  for (int i = 0; i < 8; ++i) CHECK(p.beforeLaunch(Settings::kAuto, true, false, never) == Rebuild::No);
}

TEST_CASE("update policy: a program whose sizes change asks for device updates at once", "[unit][graph]") {
  UpdatePolicy p;
  p.expectUpdates();
  CHECK(p.wantDevice(Settings::kAuto));
  CHECK(p.wantDevice(Settings::kAlways));
  CHECK_FALSE(p.wantDevice(Settings::kNever));
  // Built so already: launches with updates never rebuild it for them.
  for (int i = 0; i < 8; ++i) CHECK(p.beforeLaunch(Settings::kAuto, true, true, never) == Rebuild::No);
}

TEST_CASE("update policy: back to host updates when the device falls behind", "[unit][graph]") {
  UpdatePolicy p;
  for (int i = 0; i < 3; ++i) p.beforeLaunch(Settings::kAuto, true, false, never);
  REQUIRE(p.beforeLaunch(Settings::kAuto, true, false, never) == Rebuild::ForDevice);
  int asked = 0;
  auto behind = [&] {
    ++asked;
    return true;
  };
  // A grid changed within the last 8 launches: the device keeps the updates.
  p.updated(true);
  for (int i = 0; i < 8; ++i) {
    CHECK(p.beforeLaunch(Settings::kAuto, true, true, behind) == Rebuild::No);
    p.updated(false);
  }
  CHECK(asked == 8);
  // Eight launches without a new grid: back to the host, for good.
  CHECK(p.beforeLaunch(Settings::kAuto, true, true, behind) == Rebuild::ForHost);
  CHECK_FALSE(p.wantDevice(Settings::kAuto));
  for (int i = 0; i < 8; ++i) CHECK(p.beforeLaunch(Settings::kAuto, true, false, never) == Rebuild::No);
  CHECK(p.wantDevice(Settings::kAlways));
}

TEST_CASE("update policy: only auto rebuilds; the device is asked only when it updates", "[unit][graph]") {
  for (auto mode : {Settings::kAlways, Settings::kNever}) {
    UpdatePolicy p;
    int asked = 0;
    auto behind = [&] {
      ++asked;
      return true;
    };
    for (int i = 0; i < 16; ++i) CHECK(p.beforeLaunch(mode, true, i % 2 == 0, behind) == Rebuild::No);
    CHECK(asked == 0);
  }
  UpdatePolicy p;
  int asked = 0;
  auto behind = [&] {
    ++asked;
    return false;
  };
  for (int i = 0; i < 3; ++i) p.beforeLaunch(Settings::kAuto, true, false, behind);
  CHECK(asked == 0);
}
