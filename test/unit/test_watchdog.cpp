// test_watchdog.cpp - a communicator's watchdog (runtime/src/comm/watchdog.h)
// with tokens of the test's own, and hj_options.comm_timeout bounding the
// host backend's waits (CUDA's watchdog is tested on the GPU).
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "comm/watchdog.h"
#include "core/context.h"
#include "helpers.h"
#include "hostjit/runtime.h"

namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// Tokens are flags the test sets when "the work" completes.
struct Flags {
  std::atomic<int> flag[64] = {};
  void *token(int i) { return &flag[i]; }
};

struct Expiry {
  std::mutex m;
  std::vector<std::string> messages;
  Clock::time_point at;
  std::string first() {
    std::lock_guard<std::mutex> l(m);
    return messages.empty() ? "" : messages[0];
  }
  size_t count() {
    std::lock_guard<std::mutex> l(m);
    return messages.size();
  }
};

hj::Watchdog::Hooks hooks(Expiry &x, std::function<std::string()> failed = nullptr) {
  return hj::Watchdog::Hooks{[](void *t) { return static_cast<std::atomic<int> *>(t)->load(); }, std::move(failed),
                             [&x](const std::string &m) {
                               std::lock_guard<std::mutex> l(x.m);
                               x.messages.push_back(m);
                               x.at = Clock::now();
                             }};
}

bool waitFor(const std::function<bool()> &cond, double seconds) {
  auto end = Clock::now() + std::chrono::duration<double>(seconds);
  for (;;) {
    if (cond()) return true;
    if (Clock::now() > end) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

}  // namespace

TEST_CASE("watchdog: work that never completes expires once, naming the rank, the work and the wait",
          "[watchdog]") {
  Flags f;
  Expiry x;
  hj::Watchdog dog(1, 4, 0.25, hooks(x));
  f.flag[0] = 1;  // completed before it is even looked at
  auto start = Clock::now();
  dog.watch(f.token(0), "all_reduce (all_reduce of @main at a.hir:3:3)");
  dog.watch(f.token(1), "all_gather (all_gather of @main at a.hir:4:3)");
  REQUIRE(waitFor([&] { return x.count() > 0; }, 5));
  double waited = std::chrono::duration<double>(x.at - start).count();
  CHECK(waited >= 0.25);
  CHECK(waited < 0.25 + 0.5);
  std::string m = x.first();
  CHECK(m ==
        "rank 1: all_gather (all_gather of @main at a.hir:4:3) did not complete within the communicator's timeout "
        "of 0.25 s (work 2 of the communicator, queued " +
            m.substr(m.find("queued ") + 7, 3) +
            " s ago; the ranks it waits for: 0, 2, 3): a rank died, hangs or did not reach it, or work queued before it is still running; the communicator "
            "was aborted");
  CHECK(dog.expired());
  CHECK(dog.watched() == 2);
  // The completed piece's token came back; nothing is watched after expiry.
  CHECK(dog.reuse() == f.token(0));
  CHECK(dog.reuse() == nullptr);
  dog.watch(f.token(2), "broadcast (x)");
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  CHECK(x.count() == 1);
  dog.stop();
  std::vector<void *> left;
  dog.drain([&](void *t) { left.push_back(t); });
  CHECK(left == std::vector<void *>{f.token(1), f.token(2)});
}

TEST_CASE("watchdog: work that completes in time never expires, and its tokens are reused", "[watchdog]") {
  Flags f;
  Expiry x;
  {
    hj::Watchdog dog(0, 2, 1.0, hooks(x));  // ample: a loaded machine may delay the thread
    for (int round = 0; round < 5; ++round) {
      dog.watch(f.token(0), "all_reduce (r)");
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      f.flag[0] = 1;
      REQUIRE(waitFor([&] { return dog.reuse() == f.token(0); }, 2));
      f.flag[0] = 0;  // recorded again
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(400));
    CHECK(dog.watched() == 5);
    CHECK_FALSE(dog.expired());
    dog.recycle(f.token(7));  // handed out, not used: back to the free list
    CHECK(dog.reuse() == f.token(7));
    CHECK(dog.reuse() == nullptr);
  }  // the destructor stops the thread
  CHECK(x.count() == 0);
}

TEST_CASE("watchdog: many pieces at once, the ring grown around its head, all come back in order", "[watchdog]") {
  Flags f;
  Expiry x;
  hj::Watchdog dog(0, 2, 30, hooks(x));
  for (int i = 0; i < 10; ++i) dog.watch(f.token(i), "piece " + std::to_string(i));
  for (int i = 0; i < 5; ++i) f.flag[i] = 1;
  std::vector<void *> back;
  REQUIRE(waitFor(
      [&] {
        while (void *t = dog.reuse()) back.push_back(t);
        return back.size() == 5;
      },
      5));
  for (int i = 10; i < 50; ++i) dog.watch(f.token(i), "piece " + std::to_string(i));  // grows twice, head at 5
  for (int i = 5; i < 50; ++i) f.flag[i] = 1;
  REQUIRE(waitFor(
      [&] {
        while (void *t = dog.reuse()) back.push_back(t);
        return back.size() == 50;
      },
      5));
  std::sort(back.begin(), back.end());
  for (int i = 0; i < 50; ++i) CHECK(back[i] == f.token(i));
  CHECK(dog.watched() == 50);
  CHECK(x.count() == 0);
}

TEST_CASE("watchdog: an error the communicator reports expires it at once with that error", "[watchdog]") {
  Flags f;
  Expiry x;
  std::atomic<bool> broken{false};
  hj::Watchdog dog(0, 2, 60, hooks(x, [&] { return broken ? std::string("NCCL reported remote process exited") : ""; }));
  dog.watch(f.token(0), "send (send of @main at p.hir:9:5) and the rest of its send/receive group");
  std::this_thread::sleep_for(std::chrono::milliseconds(60));
  CHECK(x.count() == 0);
  auto start = Clock::now();
  broken = true;
  REQUIRE(waitFor([&] { return x.count() > 0; }, 5));
  CHECK(since(start) < 1.0);
  std::string m = x.first();
  CHECK(m.rfind("rank 0: send (send of @main at p.hir:9:5) and the rest of its send/receive group failed (work 1 of "
                "the communicator, queued ",
                0) == 0);
  CHECK(m.find("; the ranks it waits for: 1): NCCL reported remote process exited; the communicator was aborted") !=
        std::string::npos);
}

TEST_CASE("watchdog: a watchdog that never watched anything starts no thread and stops at once", "[watchdog]") {
  Expiry x;
  auto start = Clock::now();
  { hj::Watchdog dog(0, 2, 0.1, hooks(x)); }
  CHECK(since(start) < 0.1);
  CHECK(x.count() == 0);
}

namespace {

hj_context *hostContext(double timeout) {
  hj_options o;
  hj_options_init(&o);
  o.comm_timeout = timeout;
  hj_context *ctx = nullptr;
  REQUIRE(hj_context_create(&o, &ctx) == HJ_OK);
  return ctx;
}

}  // namespace

TEST_CASE("comm_timeout: hj_options bounds the host backend's join and collectives", "[watchdog][spmd]") {
  hj_comm_id id;
  REQUIRE(hj_comm_unique_id(HJ_BACKEND_HOST, &id) == HJ_OK);
  SECTION("a rank that never joins") {
    hj_context *ctx = hostContext(0.2);
    auto start = Clock::now();
    CHECK(hj_comm_init(ctx, &id, 2, 0) == HJ_ERR_BACKEND);
    CHECK(std::string(hj_last_error()) == "hj_comm_init: rank 0 waited 0.2 s for the other ranks of 2 to join");
    CHECK(since(start) >= 0.2);
    CHECK(since(start) < 2.0);
    hj_context_destroy(ctx);
  }
  SECTION("a rank that never reaches the collective") {
    hj_context *a = hostContext(0.3), *b = hostContext(0.3);
    std::thread other([&] { REQUIRE(hj_comm_init(b, &id, 2, 1) == HJ_OK); });
    REQUIRE(hj_comm_init(a, &id, 2, 0) == HJ_OK);
    other.join();
    int64_t sizes[1] = {4}, strides[1] = {1};
    void *buf = nullptr;
    REQUIRE(hj_alloc(a, sizes, strides, 1, HJ_DTYPE_f32, 0, "x", &buf) == HJ_OK);
    float ones[4] = {1, 2, 3, 4};
    std::memcpy(buf, ones, sizeof ones);
    auto start = Clock::now();
    CHECK(hj_collective(a, HJ_COLL_ALL_REDUCE, buf, 4, buf, 4, 4, HJ_DTYPE_f32, HJ_REDUCE_SUM, 0, "t.hir:2:3") ==
          HJ_ERR_BACKEND);
    CHECK(std::string(hj_last_error()) ==
          "rank 0: all_reduce (t.hir:2:3): the communicator was aborted (rank 0 waited 0.3 s in all_reduce "
          "(t.hir:2:3) for the other ranks)");
    CHECK(since(start) >= 0.3);
    CHECK(since(start) < 2.0);
    hj_free(a, buf);
    hj_context_destroy(a);
    hj_context_destroy(b);
  }
}

TEST_CASE("comm_timeout: the settings say whether the user gave a timeout", "[watchdog][spmd]") {
  // CUDA's communicators of several ranks get the non-blocking NCCL path and
  // its watchdog only when the user gave a timeout (docs/spmd.md).
  hj_options o;
  hj_options_init(&o);
  {
    hostjit::test::ScopedEnv unset("HOSTJIT_COMM_TIMEOUT", "");
    hj::Settings s = hj::settingsOf(o);
    CHECK(!s.commTimeoutGiven);
    CHECK(s.commTimeout == 120);
    o.comm_timeout = 5;
    s = hj::settingsOf(o);
    CHECK(s.commTimeoutGiven);
    CHECK(s.commTimeout == 5);
    o.comm_timeout = -1;  // no bound, asked for
    s = hj::settingsOf(o);
    CHECK(s.commTimeoutGiven);
    CHECK(std::isinf(s.commTimeout));
  }
  o.comm_timeout = 0;
  hostjit::test::ScopedEnv given("HOSTJIT_COMM_TIMEOUT", "30");
  hj::Settings s = hj::settingsOf(o);
  CHECK(s.commTimeoutGiven);
  CHECK(s.commTimeout == 30);
}
