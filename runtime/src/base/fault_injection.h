// fault_injection.h - fault injection: the N-th fallible runtime operation of a
// context fails (hj_inject_failure, hj_options.fail_at, HOSTJIT_FAIL_AT), so
// tests can prove that every failure point cleans up.
#pragma once

#include <cstdint>

#include "hostjit/runtime.h"

namespace hj {

class FaultInjector {
 public:
  explicit FaultInjector(hj_stats &stats) : stats_(stats) {}
  // Fails operation n counted from now (0: none).
  void arm(uint64_t n) {
    failAt_ = n;
    count_ = 0;
  }
  // Counts one fallible operation; returns HJ_ERR_INJECTED (with a message
  // naming `what`, printf-style) when it is the one to fail, else HJ_OK.
  template <class... Args>
  int32_t check(const char *what, Args... args) {
    ++stats_.fallible_ops;
    if (failAt_ == 0 || ++count_ != failAt_) return HJ_OK;
    return fire(what, args...);
  }

 private:
  int32_t fire(const char *what, ...) __attribute__((format(printf, 2, 3)));
  hj_stats &stats_;
  uint64_t failAt_ = 0, count_ = 0;
};

}  // namespace hj
