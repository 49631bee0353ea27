// worth_policy.h - whether graph mode pays for a program: a program of few
// launches whose calls are nearly all new signatures runs most of them
// eagerly (HOSTJIT_GRAPH_MIN_LAUNCHES), since a trace, a plan and node
// updates cost more than launching. Kept per program (a key's first 8
// bytes), free of CUDA and of the graph cache so that it is tested alone.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>

namespace hj {

class WorthPolicy {
 public:
  // least: Settings::graphMinLaunches (0: graph mode always pays).
  explicit WorthPolicy(uint32_t least) : least_(least) {}

  // A call of `program` that found its signature cached (miss false) or
  // not: whether it runs eagerly, with `why` the reason when it does. Of
  // the last (up to 64) calls, a program whose last trace made fewer than
  // `least` launches, with at least 16 calls, 7 in 8 of them new
  // signatures, runs them eagerly but one in eight (traced, so that
  // signatures that come back are cached).
  bool eager(uint64_t program, bool miss, std::string *why);
  // The launches (library calls and collectives included) of the
  // program's last trace.
  void traced(uint64_t program, uint64_t launches) { programs_[program].launches = launches; }
  // A program going away: its counts go too.
  void forget(uint64_t program);
  void clear();

 private:
  struct Calls {
    uint32_t calls = 0, misses = 0, skipped = 0;
    uint64_t launches = UINT64_MAX;  // none traced yet
  };
  uint32_t least_;
  std::unordered_map<uint64_t, Calls> programs_;
  uint64_t last_ = 0;
  Calls *lastCalls_ = nullptr;  // programs_[last_] (its elements do not move): a model called again and again
};

}  // namespace hj
