// test_profile.cpp - profiles and traces on the host backend: every runtime
// call a span, the rows' counts and times, the trace's format and its
// agreement with the call record, graph mode's spans, and the errors.
#include "helpers.h"

#include <filesystem>

#include "common/trace_check.h"

using namespace hostjit;
using namespace hostjit::test;

namespace {

const std::string kStreams = std::string(HOSTJIT_SOURCE_DIR) + "/test/programs/streams.hir";

std::shared_ptr<Runtime> profilingRuntime() {
  hj_options o = testOptions();
  o.profile = 1;
  return makeRuntime(o);
}

const hj_profile_row *findRow(const std::vector<hj_profile_row> &rows, const std::string &kind,
                              const std::string &name) {
  for (const hj_profile_row &r : rows)
    if (r.kind == kind && r.name == name) return &r;
  return nullptr;
}

}  // namespace

TEST_CASE("profile: each runtime call of a program is a span; the trace matches the call record", "[profile]") {
  Program p = parseOk(readFile(kStreams), kStreams);
  for (bool jit : {false, true}) {
    INFO((jit ? "jit" : "eval"));
    auto rt = profilingRuntime();
    Runner runner(p, rt, jit);
    auto in = InputSet::random(rt, runner.plan(), {{"x", {6, 5}}}, 11);
    REQUIRE(in);
    hj_record_enable(rt->context(), 1);
    for (int call = 0; call < 3; ++call) {
      auto out = runner.run(in->span());
      INFO((out ? "" : out.error().message));
      REQUIRE(out);
    }
    auto rows = rt->profile();
    REQUIRE(rows);
    // accumulate_row runs once per row of x, in each of the three calls.
    const hj_profile_row *acc = findRow(*rows, "launch", "accumulate_row");
    REQUIRE(acc);
    CHECK(acc->calls == 18);
    CHECK(acc->timed == 18);  // the host backend times each kernel's run
    CHECK(std::string(acc->site).find("streams.hir") != std::string::npos);
    CHECK(acc->device_us_min <= acc->device_us_median);
    CHECK(acc->device_us_median <= acc->device_us_max);
    CHECK(acc->device_us_total >= acc->device_us_max);
    const hj_profile_row *call = findRow(*rows, "call", "main");
    REQUIRE(call);
    CHECK(call->calls == 3);
    CHECK(call->timed == 0);
    // A program call holds its runtime calls.
    CHECK(call->host_us_total >= acc->host_us_total);
    const hj_profile_row *z = findRow(*rows, "alloc", "z");  // zero_init: its memset is timed
    REQUIRE(z);
    CHECK(z->calls == 3);
    CHECK(z->timed == 3);
    const hj_profile_row *sem = findRow(*rows, "alloc", "sem");  // resets_to_zero: nothing queued
    REQUIRE(sem);
    CHECK(sem->calls == 18);
    CHECK(sem->timed == 0);
    REQUIRE(findRow(*rows, "event", "record"));
    CHECK(findRow(*rows, "event", "record")->calls == 6);
    // Rows with device time come first, the largest first.
    for (size_t i = 1; i < rows->size(); ++i)
      CHECK((*rows)[i - 1].device_us_total >= (*rows)[i].device_us_total);

    nlohmann::json t = traceOf(*rt, jit ? "jit" : "eval");
    REQUIRE(t.is_object());  // written and read back
    INFO(traceProblems(t));
    REQUIRE(traceProblems(t).empty());
    INFO(traceMatchesRecord(t, rt->context()));
    CHECK(traceMatchesRecord(t, rt->context()).empty());
    // Each launch has its device work on its stream's track, after the call began.
    size_t deviceLaunches = 0, counters = 0;
    for (const auto &e : t["traceEvents"]) {
      if (e["ph"] == "C") ++counters;
      if (e["ph"] != "X" || e["pid"] != 2) continue;
      CHECK(e["tid"] == e["args"]["stream"].get<int>() + 1);
      deviceLaunches += e["cat"] == "launch";
    }
    uint64_t launches = 0;  // copy_f32 has two sites, so two rows
    for (const hj_profile_row &r : *rows) launches += std::string(r.kind) == "launch" ? r.calls : 0;
    CHECK(launches == 6 * 3 + 6 * 3 + 2 * 3);
    CHECK(deviceLaunches == launches);
    size_t memsets = 0;  // %z's, zero_init: its memset is a device slice of its own
    for (const auto &e : t["traceEvents"])
      if (e["ph"] == "X" && e["pid"] == 2 && e["cat"] == "memset") {
        CHECK(e["name"] == "memset %z");
        ++memsets;
      }
    CHECK(memsets == 3);
    CHECK(counters > 0);
    CHECK(t["otherData"]["dropped_events"] == 0);

    REQUIRE(hj_profile_clear(rt->context()) == HJ_OK);
    auto none = rt->profile();
    REQUIRE(none);
    CHECK(none->empty());
  }
}

TEST_CASE("profile: graph mode's builds, updates and launches are spans of the program's call", "[profile][graph]") {
  Program p = parseOk(readFile(kStreams), kStreams);
  auto rt = profilingRuntime();
  Runner runner(p, rt, true, OptLevel::O2, true);
  for (int64_t rows : {6, 6, 4, 6}) {
    auto in = InputSet::random(rt, runner.plan(), {{"x", {rows, 5}}}, 12);
    REQUIRE(in);
    auto out = runner.run(in->span());
    INFO((out ? "" : out.error().message));
    REQUIRE(out);
  }
  auto rows = rt->profile();
  REQUIRE(rows);
  const hj_profile_row *launch = findRow(*rows, "graph_launch", "main");
  REQUIRE(launch);
  CHECK(launch->calls == rt->stats().graph_replays);
  CHECK(launch->timed == launch->calls);
  const hj_profile_row *build = findRow(*rows, "graph_build", "main");
  REQUIRE(build);
  CHECK(build->calls == rt->stats().graph_builds);
  nlohmann::json t = traceOf(*rt, "graph");
  REQUIRE(t.is_object());  // written and read back
  INFO(traceProblems(t));
  CHECK(traceProblems(t).empty());
  size_t graphLaunches = 0;
  for (const auto &e : t["traceEvents"])
    if (e["ph"] == "X" && e["pid"] == 2 && e["cat"] == "graph_launch") {
      ++graphLaunches;
      CHECK(e["args"]["nodes"].get<int>() > 0);
    }
  CHECK(graphLaunches == launch->calls);
}

TEST_CASE("profile: a context that does not profile says how to make one that does", "[profile]") {
  auto rt = makeRuntime();
  uint64_t n = 7;
  CHECK(hj_profile_count(rt->context(), &n) == HJ_ERR_INVALID_ARGUMENT);
  CHECK(std::string(hj_last_error()).find("hj_options.profile = 1, or set HOSTJIT_PROFILE=1") != std::string::npos);
  CHECK(n == 7);
  CHECK(hj_trace_write(rt->context(), "/tmp/never.json") == HJ_ERR_INVALID_ARGUMENT);
  CHECK(!std::filesystem::exists("/tmp/never.json"));
  hj_range_push(rt->context(), "ignored");  // no-ops
  hj_range_pop(rt->context());
  hj_range_pop(rt->context());

  auto prof = profilingRuntime();
  CHECK(hj_trace_write(prof->context(), "/nonexistent-dir/t.json") == HJ_ERR_INVALID_ARGUMENT);
  CHECK(std::string(hj_last_error()) == "hj_trace_write: cannot write '/nonexistent-dir/t.json'");
  hj_profile_row row;
  REQUIRE(hj_profile_count(prof->context(), &n) == HJ_OK);
  CHECK(n == 0);
  CHECK(hj_profile_get(prof->context(), 0, &row) == HJ_ERR_INVALID_ARGUMENT);
  CHECK(std::string(hj_last_error()) == "hj_profile_get: row 0 of 0 (call hj_profile_count first)");
}

TEST_CASE("profile: a trace keeps at most HOSTJIT_TRACE_EVENTS spans and counts the rest", "[profile]") {
  setenv("HOSTJIT_TRACE_EVENTS", "10", 1);
  auto rt = profilingRuntime();
  unsetenv("HOSTJIT_TRACE_EVENTS");
  hj_context *ctx = rt->context();
  int64_t n = 16;
  for (int i = 0; i < 20; ++i) {
    void *b = nullptr;
    REQUIRE(hj_alloc(ctx, &n, nullptr, 1, HJ_DTYPE_f32, HJ_ALLOC_ZERO_INIT, "b", &b) == HJ_OK);
    REQUIRE(hj_free(ctx, b) == HJ_OK);
  }
  auto rows = rt->profile();
  REQUIRE(rows);
  const hj_profile_row *alloc = findRow(*rows, "alloc", "b");
  REQUIRE(alloc);
  CHECK(alloc->calls == 20);  // rows count every call
  CHECK(alloc->timed == 20);
  nlohmann::json t = traceOf(*rt, "limit");
  REQUIRE(t.is_object());  // written and read back
  CHECK(traceProblems(t).empty());
  CHECK(t["otherData"]["dropped_events"] == 30);
  CHECK(hostCalls(t).size() == 10);
  // A row's strings outlive the spans that come after it (names interned later).
  const char *name = alloc->name;
  for (int i = 0; i < 200; ++i) {
    void *b = nullptr;
    std::string other = "b";
    other += std::to_string(i);
    REQUIRE(hj_alloc(ctx, &n, nullptr, 1, HJ_DTYPE_f32, 0, other.c_str(), &b) == HJ_OK);
    REQUIRE(hj_free(ctx, b) == HJ_OK);
  }
  CHECK(std::string(name) == "b");
}

TEST_CASE("graph mode: the last call's memory plan, buffers sharing slots", "[profile][graph]") {
  Program p = parseOk(readFile(kStreams), kStreams);
  auto rt = makeRuntime();
  uint64_t n = 0, block = 0, zeroedAt = 0;
  CHECK(hj_graph_plan_size(rt->context(), &n, &block, &zeroedAt) == HJ_ERR_NOT_FOUND);
  CHECK(std::string(hj_last_error()) ==
        "hj_graph_plan_size: the last graph-mode call has no memory plan (none was made, or it ran eagerly)");
  Runner runner(p, rt, false, OptLevel::O2, true);
  auto in = InputSet::random(rt, runner.plan(), {{"x", {6, 5}}}, 13);
  REQUIRE(in);
  auto out = runner.run(in->span());
  REQUIRE(out);
  REQUIRE(hj_graph_plan_size(rt->context(), &n, &block, &zeroedAt) == HJ_OK);
  CHECK(zeroedAt <= block);
  std::vector<hj_plan_buffer> bufs(n);
  size_t tmps = 0, sems = 0;
  uint64_t tmpOffset = UINT64_MAX;
  for (uint64_t i = 0; i < n; ++i) {
    REQUIRE(hj_graph_plan_get(rt->context(), i, &bufs[i]) == HJ_OK);
    const hj_plan_buffer &b = bufs[i];
    if (b.output) {
      CHECK(b.last == UINT64_MAX);
      continue;
    }
    CHECK(b.first < b.last);
    CHECK(b.capacity >= b.bytes);
    CHECK(b.offset + b.capacity <= block);
    if (std::string(b.name) == "tmp") {  // one per row, one after another: one slot
      if (tmpOffset == UINT64_MAX) tmpOffset = b.offset;
      CHECK(b.offset == tmpOffset);
      ++tmps;
    }
    if (std::string(b.name) == "sem") {  // resets_to_zero: in the zeroed part
      CHECK(b.zeroed == 1);
      CHECK(b.offset >= zeroedAt);
      ++sems;
    }
  }
  CHECK(tmps == 6);
  CHECK(sems == 6);
  hj_plan_buffer b;
  CHECK(hj_graph_plan_get(rt->context(), n, &b) == HJ_ERR_INVALID_ARGUMENT);
}
