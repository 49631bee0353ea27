// interleave.cpp - several ways of issuing one program, timed in one run (interleave.h).
#include "interleave.h"

#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>

namespace hostjit::bench {

namespace {

// User-space instructions and cycles of this thread (perf_event_open), for
// telling where a difference in time comes from; -1 where the kernel does
// not allow counting.
class UserCounters {
 public:
  UserCounters() {
    fd_[0] = open(PERF_COUNT_HW_INSTRUCTIONS);
    fd_[1] = open(PERF_COUNT_HW_CPU_CYCLES);
  }
  ~UserCounters() {
    for (int fd : fd_)
      if (fd >= 0) close(fd);
  }
  // Instructions and cycles so far (-1 each where not counted).
  std::array<double, 2> read() const {
    std::array<double, 2> v = {-1, -1};
    for (int i = 0; i < 2; ++i) {
      uint64_t x = 0;
      if (fd_[i] >= 0 && ::read(fd_[i], &x, sizeof x) == static_cast<ssize_t>(sizeof x)) v[i] = static_cast<double>(x);
    }
    return v;
  }

 private:
  static int open(uint64_t config) {
    perf_event_attr a{};
    a.size = sizeof a;
    a.type = PERF_TYPE_HARDWARE;
    a.config = config;
    a.exclude_kernel = 1;
    a.exclude_hv = 1;
    return static_cast<int>(syscall(SYS_perf_event_open, &a, 0, -1, -1, 0));
  }
  int fd_[2] = {-1, -1};
};

double median(std::vector<double> v) {
  if (v.empty()) return -1;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

}  // namespace

void interleave(benchmark::State &state, hj_context *ctx, int batch, const std::vector<Way> &ways) {
  for (const auto &w : ways)
    if (w.second()) return state.SkipWithError(hj_last_error());  // warm: kernels, pool, graphs
  hj_synchronize(ctx);
  UserCounters counters;
  size_t n = ways.size(), round = 0;
  std::vector<std::vector<double>> us(n), instr(n), cycles(n);
  for (auto _ : state) {
    double total = 0;
    for (size_t j = 0; j < n; ++j) {
      size_t m = (round + j) % n;
      auto c0 = counters.read();
      auto a = std::chrono::steady_clock::now();
      for (int i = 0; i < batch; ++i)
        if (ways[m].second()) return state.SkipWithError(hj_last_error());
      auto b = std::chrono::steady_clock::now();
      auto c1 = counters.read();
      if (hj_synchronize(ctx)) return state.SkipWithError(hj_last_error());
      double t = std::chrono::duration<double>(b - a).count();
      total += t;
      us[m].push_back(t * 1e6 / batch);
      if (c0[0] >= 0) instr[m].push_back((c1[0] - c0[0]) / batch);
      if (c0[1] >= 0) cycles[m].push_back((c1[1] - c0[1]) / batch);
    }
    state.SetIterationTime(total);
    ++round;
  }
  for (size_t m = 0; m < n; ++m) {
    state.counters[ways[m].first + "_us"] = median(us[m]);
    state.counters[ways[m].first + "_instr"] = median(instr[m]);
    state.counters[ways[m].first + "_cycles"] = median(cycles[m]);
  }
}


}  // namespace hostjit::bench
