// test_cuda_profile.cpp - profiles and traces on a real GPU: the examples'
// outputs unchanged by profiling, each launch's device time from CUDA
// events, the trace's format, its agreement with the call record and the
// order of each stream's work, and graph mode's launches timed.
#include "common/trace_check.h"
#include "gpu_helpers.h"
#include "hostjit/exec/host_data.h"
#include "hostjit/exec/parity.h"
#include "reference.h"

#include <map>

using namespace hostjit;
using namespace hostjit::gputest;
using hostjit::test::traceOf;
using hostjit::test::traceMatchesRecord;
using hostjit::test::traceProblems;

namespace {

std::shared_ptr<Runtime> profilingCudaRuntime() {
  hj_options o;
  hj_options_init(&o);
  o.backend = HJ_BACKEND_CUDA;
  o.check_zeroed = o.fill_nan = o.reuse_zeroed_memory = 0;
  o.profile = 1;
  auto rt = Runtime::create(o);
  INFO((rt ? "" : rt.error().message));
  REQUIRE(rt);
  return *rt;
}

}  // namespace

TEST_CASE("profile on the GPU: launches timed by CUDA events, the trace matches the record", "[cuda][profile]") {
  const std::string dir = sourceDir() + "/examples";
  for (const std::string &name : examples::exampleNames()) {
    const examples::ExampleCase c = examples::exampleCases(dir, name).back();
    Program p = load(c.file);
    for (bool useJit : {false, true}) {
      INFO(name << (useJit ? " (jit)" : " (eval)"));
      auto rt = profilingCudaRuntime(), plain = cudaRuntime();
      Runner profiled(p, rt, useJit), reference(p, plain, useJit);
      auto plan = makePlan(p);
      REQUIRE(plan);
      auto in = InputSet::random(rt, *plan, c.shapes, 31);
      auto inPlain = InputSet::random(plain, *plan, c.shapes, 31);
      REQUIRE(in);
      REQUIRE(inPlain);
      hj_record_enable(rt->context(), 1);
      std::vector<Tensor> first;
      for (int call = 0; call < 3; ++call) {
        auto out = profiled.run(in->span(), c.scalars);
        INFO((out ? "" : out.error().message));
        REQUIRE(out);
        if (call == 0) first = std::move(*out);
      }
      auto expected = reference.run(inPlain->span(), c.scalars);
      REQUIRE(expected);
      CHECK(!compareOutputs(first, *expected));  // profiling changes no result
      CHECK(examples::checkExample(c, *in, first).empty());

      auto rows = rt->profile();
      REQUIRE(rows);
      uint64_t launches = 0;
      for (const hj_profile_row &r : *rows) {
        if (std::string(r.kind) != "launch") continue;
        INFO(r.name << " at " << r.site);
        launches += r.calls;
        CHECK(r.timed == r.calls);
        CHECK(r.device_us_min > 0);
        CHECK(r.device_us_median >= r.device_us_min);
        CHECK(r.device_us_max >= r.device_us_median);
        CHECK(r.host_us_median > 0);
      }
      CHECK(launches == rt->stats().launches);

      nlohmann::json t = traceOf(*rt, name + (useJit ? "_jit" : "_eval"));
      REQUIRE(t.is_object());  // written and read back
      INFO(traceProblems(t));
      REQUIRE(traceProblems(t).empty());
      INFO(traceMatchesRecord(t, rt->context()));
      CHECK(traceMatchesRecord(t, rt->context()).empty());
      CHECK(t["otherData"]["backend"] == "cuda");
      // A stream runs its work in order: its slices do not overlap (1 us of
      // slack for the events' resolution).
      std::map<int, std::vector<std::pair<double, double>>> tracks;
      size_t deviceLaunches = 0;
      for (const auto &e : t["traceEvents"])
        if (e["ph"] == "X" && e["pid"] == 2) {
          tracks[e["tid"].get<int>()].push_back({e["ts"].get<double>(), e["dur"].get<double>()});
          deviceLaunches += e["cat"] == "launch";
        }
      CHECK(deviceLaunches == launches);
      for (auto &[tid, slices] : tracks) {
        std::sort(slices.begin(), slices.end());
        for (size_t i = 1; i < slices.size(); ++i) {
          INFO("stream track " << tid << ", slice " << i);
          CHECK(slices[i].first >= slices[i - 1].first + slices[i - 1].second - 1.0);
        }
      }
    }
  }
}

TEST_CASE("profile on the GPU: graph mode's launches timed as whole graphs", "[cuda][profile][graph]") {
  Program p = load(sourceDir() + "/examples/pipeline.hir");
  const examples::ExampleCase c = examples::exampleCases(sourceDir() + "/examples", "pipeline").back();
  auto rt = profilingCudaRuntime();
  Runner graph(p, rt, true, true);
  auto plan = makePlan(p);
  REQUIRE(plan);
  auto in = InputSet::random(rt, *plan, c.shapes, 32);
  REQUIRE(in);
  for (int call = 0; call < 5; ++call) {
    auto out = graph.run(in->span(), c.scalars);
    INFO((out ? "" : out.error().message));
    REQUIRE(out);
    CHECK(examples::checkExample(c, *in, *out).empty());
  }
  auto rows = rt->profile();
  REQUIRE(rows);
  const hj_profile_row *launch = nullptr;
  for (const hj_profile_row &r : *rows)
    if (std::string(r.kind) == "graph_launch") launch = &r;
  REQUIRE(launch);
  CHECK(std::string(launch->name) == "main");
  CHECK(launch->calls == rt->stats().graph_replays);
  CHECK(launch->timed == launch->calls);
  CHECK(launch->device_us_min > 0);
  nlohmann::json t = traceOf(*rt, "graph");
  REQUIRE(t.is_object());  // written and read back
  INFO(traceProblems(t));
  CHECK(traceProblems(t).empty());
}
