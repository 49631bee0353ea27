// inject.h - fails every fallible runtime operation of a call in turn
// (hj_inject_failure) and checks the cleanup; shared by the unit and GPU tests.
#pragma once

#include <catch2/catch.hpp>
#include <functional>
#include <string>
#include <vector>

#include "hostjit/exec/parity.h"
#include "hostjit/exec/runtime_handles.h"

namespace hostjit::test {

using RunFn = std::function<Expected<std::vector<Tensor>>()>;

// Fails each fallible operation of one call in turn; returns how many there were.
inline uint64_t injectEverywhere(Runtime &rt, const RunFn &run, const std::string &what) {
  hj_context *ctx = rt.context();
  hj_inject_failure(ctx, 0);
  hj_reset_stats(ctx);
  auto baseline = run();
  INFO(what << (baseline ? "" : ": " + baseline.error().message));
  REQUIRE(baseline);
  uint64_t ops = rt.stats().fallible_ops;
  REQUIRE(ops > 0);
  for (uint64_t n = 1; n <= ops; ++n) {
    INFO(what << ", operation " << n << " of " << ops);
    uint64_t liveBefore = rt.stats().live_bytes;
    hj_inject_failure(ctx, n);
    hj_reset_stats(ctx);
    auto out = run();
    if (out) {  // a later call makes fewer operations (the arena has grown already)
      CHECK(rt.stats().fallible_ops < n);
      hj_inject_failure(ctx, 0);
      continue;
    }
    CHECK(out.error().status == HJ_ERR_INJECTED);
    CHECK_THAT(out.error().message, Catch::StartsWith("injected failure of operation " + std::to_string(n) + ": "));
    CHECK(rt.stats().live_bytes == liveBefore);
    int32_t zero = 0;
    REQUIRE(hj_arena_check_zero(ctx, &zero) == HJ_OK);
    CHECK(zero == 1);
    hj_inject_failure(ctx, 0);
    auto again = run();
    REQUIRE(again);
    auto diff = compareOutputs(*baseline, *again);
    INFO((diff ? *diff : ""));
    CHECK(!diff);
  }
  return ops;
}


}  // namespace hostjit::test
