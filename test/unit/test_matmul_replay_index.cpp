// test_matmul_replay_index.cpp - the rules by which a CUDA context replays
// eager matmuls from captured graphs, without CUDA: what a call's key holds,
// admission on the second sighting, least-recently-used eviction, a capture
// that failed never tried again, and HOSTJIT_MATMUL_REPLAYS read or refused.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "cuda/matmul_replay_index.h"

using hj::MatmulCall;
using hj::MatmulReplayIndex;
using Step = MatmulReplayIndex::Step;

namespace {

MatmulCall call(uintptr_t c) {
  MatmulCall m;
  m.a = reinterpret_cast<const void *>(uintptr_t{0x1000});
  m.b = reinterpret_cast<const void *>(uintptr_t{0x2000});
  m.c = reinterpret_cast<void *>(c);
  m.m = 7, m.n = 5, m.k = 3;
  m.rowStride[0] = 3, m.rowStride[1] = 5, m.rowStride[2] = 5;
  m.alpha = 0.5;
  m.site = "here";
  return m;
}

}  // namespace

TEST_CASE("matmul replays: a key holds every field that decides the work", "[unit][matmul]") {
  MatmulCall base = call(0x3000);
  hj::MatmulKeyHash hash;
  CHECK(hj::matmulKey(base) == hj::matmulKey(base));
  MatmulCall other = base;
  other.site = "elsewhere";  // where it stands is not its work
  CHECK(hj::matmulKey(other) == hj::matmulKey(base));
  std::vector<MatmulCall> changed(20, base);
  int i = 0;
  changed[i++].a = nullptr;
  changed[i++].b = nullptr;
  changed[i++].bias = &base;
  changed[i++].c = nullptr;
  changed[i++].workspace = &base;
  changed[i++].batch = 2;
  changed[i++].m = 8;
  changed[i++].n = 6;
  changed[i++].k = 4;
  changed[i++].batchStride[0] = 1;
  changed[i++].batchStride[2] = 1;
  changed[i++].rowStride[1] = 6;
  changed[i++].rowStride[2] = 9;
  changed[i++].workspaceBytes = 1;
  changed[i++].aType = 3;
  changed[i++].cType = 3;
  changed[i++].flags = 1;
  changed[i++].alpha = 0.25;
  changed[i++].beta = 1;
  changed[i++].batchStride[1] = 9;
  for (const MatmulCall &m : changed) {
    CHECK_FALSE(hj::matmulKey(m) == hj::matmulKey(base));
    CHECK(hash(hj::matmulKey(m)) != hash(hj::matmulKey(base)));
  }
}

TEST_CASE("matmul replays: admitted the second time, the least recently used dropped", "[unit][matmul]") {
  MatmulReplayIndex index(2);
  auto k1 = hj::matmulKey(call(0x10)), k2 = hj::matmulKey(call(0x20)), k3 = hj::matmulKey(call(0x30));
  uintptr_t h = 99;
  CHECK(index.find(k1, &h) == Step::Direct);
  CHECK(h == 0);
  CHECK(index.find(k1, &h) == Step::Capture);
  CHECK(index.add(k1, 101) == 0);
  CHECK(index.find(k1, &h) == Step::Replay);
  CHECK(h == 101);
  CHECK(index.find(k2, &h) == Step::Direct);
  CHECK(index.find(k2, &h) == Step::Capture);
  CHECK(index.add(k2, 102) == 0);
  CHECK(index.find(k1, &h) == Step::Replay);  // k1 now the most recently used
  CHECK(index.find(k3, &h) == Step::Direct);
  CHECK(index.find(k3, &h) == Step::Capture);
  CHECK(index.add(k3, 103) == 102);  // k2 given back for release
  CHECK(index.size() == 2);
  CHECK(index.find(k2, &h) == Step::Direct);  // forgotten: seen anew
  CHECK(index.find(k3, &h) == Step::Replay);
  CHECK(h == 103);
  std::vector<uintptr_t> released;
  index.clear([&](uintptr_t x) { released.push_back(x); });
  CHECK(released.size() == 2);
  CHECK(index.size() == 0);
  CHECK(index.find(k1, &h) == Step::Direct);
}

TEST_CASE("matmul replays: a failed capture is not tried again; none without capacity", "[unit][matmul]") {
  MatmulReplayIndex index(4);
  auto k = hj::matmulKey(call(0x10));
  uintptr_t h = 0;
  index.find(k, &h);
  REQUIRE(index.find(k, &h) == Step::Capture);
  CHECK(index.add(k, 0) == 0);
  CHECK(index.find(k, &h) == Step::Replay);
  CHECK(h == 0);  // the caller goes to the library
  MatmulReplayIndex none(0);
  for (int i = 0; i < 3; ++i) CHECK(none.find(k, &h) == Step::Direct);
  // One-off calls do not grow what is remembered without bound.
  MatmulReplayIndex small(1);
  for (uintptr_t c = 1; c <= 100; ++c) small.find(hj::matmulKey(call(c * 16)), &h);
  CHECK(small.size() == 0);
  CHECK(small.find(hj::matmulKey(call(100 * 16)), &h) == Step::Capture);
}

TEST_CASE("matmul replays: HOSTJIT_MATMUL_REPLAYS read or refused", "[unit][matmul]") {
  size_t n = 0;
  std::string error;
  CHECK(hj::matmulReplayCapacity(nullptr, &n, &error));
  CHECK(n == hj::kDefaultMatmulReplays);
  CHECK(hj::matmulReplayCapacity("", &n, &error));
  CHECK(n == hj::kDefaultMatmulReplays);
  CHECK(hj::matmulReplayCapacity("0", &n, &error));
  CHECK(n == 0);
  CHECK(hj::matmulReplayCapacity("4096", &n, &error));
  CHECK(n == 4096);
  for (const char *bad : {"-1", "many", "12x", "99999999999999999999", "1000001"}) {
    CHECK_FALSE(hj::matmulReplayCapacity(bad, &n, &error));
    CHECK(error.find("HOSTJIT_MATMUL_REPLAYS is \"" + std::string(bad) + "\"") != std::string::npos);
    CHECK(error.find("from 0 (none) to 1000000") != std::string::npos);
  }
}
