// worth_policy.cpp - HOSTJIT_GRAPH_MIN_LAUNCHES's rule.
#include "graph/worth_policy.h"

#include <cstdio>

namespace hj {

bool WorthPolicy::eager(uint64_t program, bool miss, std::string *why) {
  if (least_ == 0) return false;
  if (!lastCalls_ || last_ != program) {
    lastCalls_ = &programs_[program];
    last_ = program;
  }
  Calls &p = *lastCalls_;
  if (p.calls == 64) {  // a window of recent calls
    p.calls /= 2;
    p.misses /= 2;
  }
  ++p.calls;
  p.misses += miss;
  if (!miss || p.launches >= least_ || p.calls < 16 || p.misses * 8 < p.calls * 7 || ++p.skipped % 8 == 0)
    return false;
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "graph mode does not pay for this program: %llu launches and a new signature on %u of its last %u "
                "calls, which cost less eagerly (HOSTJIT_GRAPH_MIN_LAUNCHES=%u)",
                (unsigned long long)p.launches, p.misses, p.calls, least_);
  *why = buf;
  return true;
}

void WorthPolicy::forget(uint64_t program) {
  programs_.erase(program);
  lastCalls_ = nullptr;
}

void WorthPolicy::clear() {
  programs_.clear();
  lastCalls_ = nullptr;
}

}  // namespace hj
