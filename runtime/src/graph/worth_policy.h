// worth_policy.h - whether graph mode pays for a program's new signatures:
// a program of few launches whose calls are nearly all new signatures
// (HOSTJIT_GRAPH_MIN_LAUNCHES), or one whose graph calls capture a large
// share of their operations anew (HOSTJIT_GRAPH_RECAPTURE_PERCENT), runs
// most of them eagerly, since a trace, node updates and captures then cost
// more than launching as the program goes. Kept per program (a key's first
// 8 bytes), free of CUDA and of the graph cache so that it is tested alone.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "graph/key_hashes.h"

namespace hj {

class WorthPolicy {
 public:
  // least: Settings::graphMinLaunches (0: the rule of few launches never
  // applies); recapturePercent: Settings::graphRecapturePercent (0: the
  // rule of captures never applies).
  WorthPolicy(uint32_t least, uint32_t recapturePercent) : least_(least), recapturePercent_(recapturePercent) {}

  // A call of `program` that found its signature (`key`) cached (miss
  // false) or not: whether it runs eagerly, with `why` the reason when it
  // does. Only new signatures do; of those, one that this program ran
  // eagerly before (among the last 4096, a hash of its key) is traced,
  // since it came back and its graph will replay, and one in eight of the
  // others is traced too, so that the rules see the program's calls change.
  // Either rule makes it eager:
  // - few launches: of the last (up to 64) calls, at least 16 calls, 7 in
  //   8 of them new signatures, and the last trace made fewer than `least`
  //   launches;
  // - captures: each of the program's last 4 graph launches captured anew
  //   at least `recapturePercent` % of the graph's operations.
  bool eager(uint64_t program, bool miss, std::string_view key, std::string *why);
  // The launches (library calls and collectives included) of the
  // program's last trace.
  void traced(uint64_t program, uint64_t launches) { programs_[program].launches = launches; }
  // A launch of the program's graph of `ops` operations, of which
  // `recaptured` (library calls, custom calls, collectives) were captured
  // anew for it: their sizes or buffers changed, or the graph was built
  // again for a new topology.
  void launched(uint64_t program, uint64_t ops, uint64_t recaptured);
  // A program going away: its counts go too.
  void forget(uint64_t program);
  void clear();

 private:
  struct Calls {
    uint32_t calls = 0, misses = 0, skipped = 0;
    uint64_t launches = UINT64_MAX;  // none traced yet
    uint32_t recapturing = 0;        // the last graph launches in a row that captured the share or more
    uint64_t ops = 0, recaptured = 0;  // the last of them
    KeyHashes ranEagerly;  // the hashes of the keys run eagerly
  };
  Calls &of(uint64_t program);
  uint32_t least_, recapturePercent_;
  std::unordered_map<uint64_t, Calls> programs_;
  uint64_t last_ = 0;
  Calls *lastCalls_ = nullptr;  // programs_[last_] (its elements do not move): a model called again and again
};

}  // namespace hj
