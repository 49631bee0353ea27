// worth_policy.cpp - HOSTJIT_GRAPH_MIN_LAUNCHES's and
// HOSTJIT_GRAPH_RECAPTURE_PERCENT's rules.
#include "graph/worth_policy.h"

#include <algorithm>
#include <cstdio>
#include <functional>

namespace hj {

namespace {

constexpr uint32_t kRecapturingLaunches = 4;  // graph launches in a row that capture the share

}  // namespace

WorthPolicy::Calls &WorthPolicy::of(uint64_t program) {
  if (!lastCalls_ || last_ != program) {
    lastCalls_ = &programs_[program];
    last_ = program;
  }
  return *lastCalls_;
}

bool WorthPolicy::eager(uint64_t program, bool miss, std::string_view key, std::string *why) {
  if (least_ == 0 && recapturePercent_ == 0) return false;
  Calls &p = of(program);
  if (p.calls == 64) {  // a window of recent calls
    p.calls /= 2;
    p.misses /= 2;
  }
  ++p.calls;
  p.misses += miss;
  if (!miss) return false;
  bool few = least_ != 0 && p.launches < least_ && p.calls >= 16 && p.misses * 8 >= p.calls * 7;
  bool recapturing = recapturePercent_ != 0 && p.recapturing >= kRecapturingLaunches;
  if (!few && !recapturing) return false;
  // Hashed only here: most misses are no rule's.
  uint64_t signature = std::hash<std::string_view>{}(key);
  if (p.ranEagerly.forget(signature)) return false;  // it came back: traced, so that it replays from now on
  if (++p.skipped % 8 == 0) return false;
  p.ranEagerly.remember(signature);
  char buf[320];
  if (few)
    std::snprintf(buf, sizeof buf,
                  "graph mode does not pay for this program: %llu launches and a new signature on %u of its last %u "
                  "calls, which cost less eagerly (HOSTJIT_GRAPH_MIN_LAUNCHES=%u)",
                  (unsigned long long)p.launches, p.misses, p.calls, least_);
  else
    std::snprintf(buf, sizeof buf,
                  "graph mode does not pay for this program: its last %u graph launches each captured anew %u %% "
                  "or more of its operations (the last, %llu of %llu: library calls whose sizes or buffers "
                  "changed), which costs more than launching them eagerly (HOSTJIT_GRAPH_RECAPTURE_PERCENT=%u)",
                  p.recapturing, recapturePercent_, (unsigned long long)p.recaptured, (unsigned long long)p.ops,
                  recapturePercent_);
  *why = buf;
  return true;
}

void WorthPolicy::launched(uint64_t program, uint64_t ops, uint64_t recaptured) {
  if (recapturePercent_ == 0) return;
  Calls &p = of(program);
  if (ops == 0 || recaptured * 100 < ops * recapturePercent_) {
    p.recapturing = 0;
    return;
  }
  if (p.recapturing < UINT32_MAX) ++p.recapturing;
  p.ops = ops;
  p.recaptured = recaptured;
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
