// host_room.h - what a unit test of one of graph mode's owners needs
// beside it on the host backend: counters, the backend, a fault injector,
// a record (off), settings, and the buffers over them.
#pragma once

#include <catch2/catch.hpp>

#include <memory>

#include "backend/backend.h"
#include "base/fault_injection.h"
#include "base/settings.h"
#include "memory/buffers.h"
#include "record/call_record.h"

namespace hostjit::test {

struct HostRoom {
  hj_stats stats{};
  std::unique_ptr<hj::Backend> backend = made(hj::makeHostBackend());
  hj::FaultInjector injector{stats};
  hj::CallRecord record{false};
  hj::Settings settings;
  hj::Buffers buffers{*backend, stats, injector, record, settings, 0};

 private:
  static std::unique_ptr<hj::Backend> made(std::unique_ptr<hj::Backend> b) {
    REQUIRE(b);
    return b;
  }
};

}  // namespace hostjit::test
