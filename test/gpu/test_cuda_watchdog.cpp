// test_cuda_watchdog.cpp - the CUDA communicator's watchdog on one GPU: a
// join that never forms fails within the timeout, and a collective queued
// behind work that outlasts the timeout faults the context with a message
// naming the rank, the collective and its statement, eagerly and in graph
// mode; the context is then destroyed with nothing left behind; a caller's
// graph capture in global mode is not broken by the watchdog. (Ranks that
// die, hang or skip a collective need two GPUs: scripts/gpu/watchdog_cases.sh.)
#include <dlfcn.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>

#include "gpu_helpers.h"

using namespace hostjit;
using namespace hostjit::gputest;

namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// The collective case's timeout in whole seconds: 2, or
// HOSTJIT_TEST_WATCHDOG_TIMEOUT (for runs under compute-sanitizer, whose
// NCCL join has not completed within 2 or 10 s: docs/gpu-machine.md).
int64_t collectiveTimeout() {
  const char *v = std::getenv("HOSTJIT_TEST_WATCHDOG_TIMEOUT");
  if (!v || !*v) return 2;
  char *end = nullptr;
  long long s = std::strtoll(v, &end, 10);
  INFO("HOSTJIT_TEST_WATCHDOG_TIMEOUT=" << v);
  REQUIRE((*end == '\0' && s >= 1 && s <= 600));  // whole seconds, 1 to 600
  return s;
}

std::shared_ptr<Runtime> timedRuntime(double timeout) {
  hj_options o;
  hj_options_init(&o);
  o.backend = HJ_BACKEND_CUDA;
  o.comm_timeout = timeout;
  auto rt = Runtime::create(o);
  INFO((rt ? "" : rt.error().message));
  REQUIRE(rt);
  return *rt;
}

// NCCL, or a warning saying why not.
bool haveNccl(hj_comm_id *id) {
  if (hj_comm_unique_id(HJ_BACKEND_CUDA, id) == HJ_OK) return true;
  WARN(std::string("skipped: ") + hj_last_error());
  return false;
}

}  // namespace

TEST_CASE("watchdog on one GPU: a join whose other rank never comes fails within the timeout", "[cuda][watchdog]") {
  hj_comm_id id;
  if (!haveNccl(&id)) return;
  auto rt = timedRuntime(1.0);
  auto start = Clock::now();
  REQUIRE(hj_comm_init(rt->context(), &id, 2, 0) == HJ_ERR_BACKEND);
  double waited = since(start);
  std::string msg = hj_last_error();
  CHECK(msg ==
        "rank 0: joining a communicator of 2 ranks did not complete within its timeout of 1 s: a rank did not join "
        "(it died, hangs, or was given another id); the join was aborted");
  CHECK(waited >= 1.0);
  CHECK(waited < 2.0);
  // The context is not harmed: it joins a communicator of its own.
  hj_comm_id alone;
  REQUIRE(hj_comm_unique_id(HJ_BACKEND_CUDA, &alone) == HJ_OK);
  INFO(hj_last_error());
  CHECK(hj_comm_init(rt->context(), &alone, 1, 0) == HJ_OK);
}

TEST_CASE("watchdog on one GPU: a collective that does not complete in time faults the context, eager and graph",
          "[cuda][watchdog]") {
  hj_comm_id probe;
  if (!haveNccl(&probe)) return;
  Program p = load(sourceDir() + "/test/gpu/programs/watchdog.hir");
  eachPath([&](bool useJit, bool graph) {
    // The timeout bounds the join too: 2 s are not always enough for NCCL's
    // join under compute-sanitizer (collectiveTimeout()).
    const int64_t timeout = collectiveTimeout();
    auto rt = timedRuntime(double(timeout));
    hj_comm_id id;
    REQUIRE(hj_comm_unique_id(HJ_BACKEND_CUDA, &id) == HJ_OK);
    int32_t joined = hj_comm_init(rt->context(), &id, 1, 0);
    INFO(hj_last_error());
    REQUIRE(joined == HJ_OK);
    Runner r(p, rt, useJit, graph);
    const int64_t n = 1000;
    // In time: work of 50 ms, twice (graph mode replays the second).
    for (int call = 0; call < 2; ++call) {
      ScalarArg quick[] = {ScalarArg::i64(n), ScalarArg::i64(50'000'000)};
      auto out = r.run({}, quick);
      INFO((out ? "" : out.error().message));
      REQUIRE(out);
      std::vector<float> v = hostFloats((*out)[0]);
      REQUIRE(v.size() == size_t(n));
      int bad = 0;
      for (int64_t i = 0; i < n; ++i) bad += v[i] != float(i + 1);
      CHECK(bad == 0);
    }
    // Behind twice the timeout of work: the watchdog fires at the timeout,
    // the call's wait ends when the kernel does, and it fails with its message.
    ScalarArg slow[] = {ScalarArg::i64(n), ScalarArg::i64(2 * timeout * 1'000'000'000)};
    auto start = Clock::now();
    auto out = r.run({}, slow);
    std::string msg;
    if (!out) {
      msg = out.error().message;
    } else {
      auto h = (*out)[0].toHost();
      REQUIRE(!h);
      msg = h.error().message;
    }
    double waited = since(start);
    WARN(msg);
    CHECK(msg.rfind(graph ? "rank 0: a replay of a graph holding 1 collective, the first all_reduce (all_reduce of @main at "
                          : "rank 0: all_reduce (all_reduce of @main at ",
                    0) == 0);
    CHECK(msg.find("watchdog.hir:21:3) did not complete within the communicator's timeout of " + std::to_string(timeout) +
                   " s (work ") !=
          std::string::npos);
    CHECK(msg.find("the ranks it waits for: none): a rank died, hangs or did not reach it, or work queued before it is still running; the communicator was aborted; "
                   "this context can no longer be used: destroy it, and the programs and kernel tables made on it, "
                   "and create a new one with a new communicator on every rank") != std::string::npos);
    CHECK(waited < 3.0 * double(timeout));
    // Every later call says the same, without touching the device.
    ScalarArg quick[] = {ScalarArg::i64(n), ScalarArg::i64(1000)};
    auto again = r.run({}, quick);
    REQUIRE(!again);
    CHECK(again.error().message == msg);
    CHECK(hj_synchronize(rt->context()) == HJ_ERR_BACKEND);
  });  // each context goes here: its graphs, then its communicator and the watchdog's thread
}

namespace {

// The few driver calls the capture test makes itself (the tests do not link
// libcuda; the runtime loads it the same way).
struct CaptureApi {
  using StreamCreate = int (*)(void **, unsigned);
  using BeginCapture = int (*)(void *, int);
  using EndCapture = int (*)(void *, void **);
  using Destroy = int (*)(void *);
  StreamCreate streamCreate = nullptr;
  BeginCapture beginCapture = nullptr;
  EndCapture endCapture = nullptr;
  Destroy graphDestroy = nullptr, streamDestroy = nullptr;
  bool load() {
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return false;
    streamCreate = reinterpret_cast<StreamCreate>(dlsym(lib, "cuStreamCreate"));
    beginCapture = reinterpret_cast<BeginCapture>(dlsym(lib, "cuStreamBeginCapture_v2"));
    endCapture = reinterpret_cast<EndCapture>(dlsym(lib, "cuStreamEndCapture"));
    graphDestroy = reinterpret_cast<Destroy>(dlsym(lib, "cuGraphDestroy"));
    streamDestroy = reinterpret_cast<Destroy>(dlsym(lib, "cuStreamDestroy_v2"));
    return streamCreate && beginCapture && endCapture && graphDestroy && streamDestroy;
  }
};

}  // namespace

TEST_CASE("watchdog on one GPU: a caller's graph capture in global mode survives the watchdog", "[cuda][watchdog]") {
  hj_comm_id id;
  if (!haveNccl(&id)) return;
  CaptureApi api;
  REQUIRE(api.load());
  auto first = cudaRuntime();  // makes the device's primary context current on this thread
  void *stream = nullptr;
  REQUIRE(api.streamCreate(&stream, 1 /* CU_STREAM_NON_BLOCKING */) == 0);
  {
    hj_options o;
    hj_options_init(&o);
    o.backend = HJ_BACKEND_CUDA;
    o.stream = stream;
    o.comm_timeout = 5;
    auto rt = Runtime::create(o);
    REQUIRE(rt);
    REQUIRE(hj_comm_init((*rt)->context(), &id, 1, 0) == HJ_OK);
    Program p = load(sourceDir() + "/test/gpu/programs/watchdog.hir");
    Runner r(p, *rt, false);
    const int64_t n = 1000;
    ScalarArg warm[] = {ScalarArg::i64(n), ScalarArg::i64(1000)};
    {  // the pool then holds two calls' buffers: the captured call, beside the busy one, allocates nothing
      auto a = r.run({}, warm), b = r.run({}, warm);
      REQUIRE(a);
      REQUIRE(b);
    }
    {
      // A call whose all-reduce is watched while the capture below runs: the
      // watchdog's queries then come while this thread captures.
      ScalarArg busy[] = {ScalarArg::i64(n), ScalarArg::i64(300'000'000)};
      auto pending = r.run({}, busy);
      REQUIRE(pending);
      REQUIRE(api.beginCapture(stream, 0 /* CU_STREAM_CAPTURE_MODE_GLOBAL */) == 0);
      auto captured = r.run({}, warm);
      INFO((captured ? "" : captured.error().message));
      CHECK(captured);
      std::this_thread::sleep_for(std::chrono::milliseconds(100));  // several polls of the watchdog
      void *graph = nullptr;
      int end = api.endCapture(stream, &graph);
      CHECK(end == 0);  // not invalidated
      CHECK(graph != nullptr);
      if (graph) api.graphDestroy(graph);
    }
    // Nothing of the capture was watched, and the context is not faulted.
    std::this_thread::sleep_for(std::chrono::milliseconds(400));
    auto after = r.run({}, warm);
    INFO((after ? "" : after.error().message));
    REQUIRE(after);
    std::vector<float> v = hostFloats((*after)[0]);
    CHECK(v[n - 1] == float(n));
    CHECK(hj_synchronize((*rt)->context()) == HJ_OK);
  }  // the runtime goes before its stream
  api.streamDestroy(stream);
}
