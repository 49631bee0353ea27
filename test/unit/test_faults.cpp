// test_faults.cpp - a kernel that faults on the device fails the call that
// finds it (and every later call on its context), says so without blaming
// the call that noticed, names the kernel and its statement with sync, and
// leaves nothing allocated; a fresh context then works. On the host backend,
// through the hook host kernels report faults with.
#include <nlohmann/json.hpp>

#include "common/fusion_cases.h"
#include "helpers.h"

using namespace hostjit;
using namespace hostjit::test;

namespace {

std::string faultProgramText() { return readFile(std::string(HOSTJIT_SOURCE_DIR) + "/test/lit/device_fault.hir"); }

hj_options syncOptions(bool sync) {
  hj_options o = testOptions();
  o.sync = sync ? 1 : 0;
  return o;
}

const char *kLater =
    "a kernel failed on the device earlier (host kernel @trap: trap instruction executed); this context can no "
    "longer be used: destroy it, and the programs and kernel tables made on it, and create a new one. To find the "
    "kernel, run with HOSTJIT_SYNC=1 (every launch then waits for its kernel, and the one that faults is named with "
    "its statement) or under compute-sanitizer";

}  // namespace

TEST_CASE("device faults: the next call says a kernel failed earlier; with sync the launch names itself", "[faults]") {
  Program p = parseOk(faultProgramText(), "device_fault.hir");
  auto plan = makePlan(p);
  REQUIRE(plan);
  for (bool jit : {false, true})
    for (bool sync : {false, true}) {
      INFO((jit ? "jit" : "eval") << (sync ? ", sync" : ""));
      auto rt = makeRuntime(syncOptions(sync));
      auto in = InputSet::random(rt, *plan, {{"x", {8}}}, 2);
      REQUIRE(in);
      Runner r(p, rt, jit);
      auto out = r.run(in->span());
      REQUIRE(!out);
      CHECK(out.error().status == HJ_ERR_BACKEND);
      if (sync)
        CHECK(out.error().message ==
              "kernel @trap (launch 2 of @main at device_fault.hir:19:3) failed on the device: host kernel @trap: "
              "trap instruction executed; this context can no longer be used: destroy it, and the programs and "
              "kernel tables made on it, and create a new one");
      else
        CHECK(out.error().message == kLater);
      CHECK(rt->stats().live_bytes == 0);
      CHECK(rt->stats().launches == 2);  // the third launch was never made
      // Every later call that reaches the device fails the same way.
      auto again = r.run(in->span());
      REQUIRE(!again);
      CHECK(again.error().message == kLater);
      CHECK(hj_synchronize(rt->context()) == HJ_ERR_BACKEND);
      CHECK(std::string(hj_last_error()) == kLater);
      CHECK(rt->stats().live_bytes == 0);
    }
  // A new context works: the fault belonged to the old one.
  std::string text = faultProgramText();
  text.replace(text.find("  launch @trap"), text.find("\n", text.find("  launch @trap")) - text.find("  launch @trap") + 1, "");
  Program good = parseOk(text);
  auto rt = makeRuntime(syncOptions(true));
  auto in = InputSet::random(rt, *plan, {{"x", {8}}}, 2);
  REQUIRE(in);
  Runner r(good, rt, true);
  auto out = r.run(in->span());
  REQUIRE(out);
  CHECK(hostOf((*out)[0]) == floats(in->hostData(0)));
}

TEST_CASE("device faults: KernelExecutor names the segment", "[faults]") {
  nlohmann::json j = {
      {"name", "faulty"},
      {"inputs", {{{"name", "x"}, {"dtype", "f32"}, {"dims", {"?"}}}}},
      {"outputs", {"y"}},
      {"kernels",
       {{{"name", "copy"}, {"params", {"ptr<f32>", "ptr<f32>", "i64"}}, {"host", "copy_f32"}},
        {{"name", "trap"}, {"params", {"ptr<f32>"}}, {"host", "trap"}}}},
      {"segments",
       {{{"name", "first"}, {"kernel", "copy"}, {"inputs", {"x"}},
         {"outputs", {{{"name", "a"}, {"dtype", "f32"}, {"extents", {"size(x, 0)"}}}}},
         {"scalars", {"size(x, 0)"}}, {"launch", {{"grid", {1, 1, 1}}, {"block", {1, 1, 1}}}}},
        {{"name", "bad"}, {"kernel", "trap"}, {"inputs", {"a"}}, {"outputs", nlohmann::json::array()},
         {"launch", {{"grid", {1, 1, 1}}, {"block", {1, 1, 1}}}}},
        {{"name", "last"}, {"kernel", "copy"}, {"inputs", {"a"}},
         {"outputs", {{{"name", "y"}, {"dtype", "f32"}, {"extents", {"size(a, 0)"}}}}},
         {"scalars", {"size(a, 0)"}}, {"launch", {{"grid", {1, 1, 1}}, {"block", {1, 1, 1}}}}}}}};
  auto f = parseFusionJson(j.dump(), "faulty.json");
  INFO((f ? "" : f.error().message));
  REQUIRE(f);
  auto rt = makeRuntime(syncOptions(true));
  auto e = FusionExecutor::create(*f, rt);
  REQUIRE(e);
  auto plan = makePlan(*lowerFusion(*f));
  auto in = InputSet::random(rt, *plan, {{"x", {8}}}, 2);
  REQUIRE(in);
  auto out = e->run(in->span());
  REQUIRE(!out);
  CHECK_THAT(out.error().message,
             Catch::StartsWith("kernel @trap (faulty.json: segments[1] (bad)) failed on the "
                               "device: host kernel @trap: trap instruction executed"));
  CHECK(rt->stats().live_bytes == 0);
  // The lowered program names the segment in the same words.
  auto rt2 = makeRuntime(syncOptions(true));
  Runner lowered(*lowerFusion(*f), rt2, true);
  auto in2 = InputSet::random(rt2, *plan, {{"x", {8}}}, 2);
  auto out2 = lowered.run(in2->span());
  REQUIRE(!out2);
  CHECK_THAT(out2.error().message,
             Catch::StartsWith("kernel @trap (faulty.json: segments[1] (bad)) failed on the device"));
}
