// call_outcome.h - hj_graph_outcome: the way the last graph-mode call went
// (fast replay, replay that ran the program, new signature, eager,
// reserved), why, and what it changed (nodes updated, at launch or not,
// graphs built or built again, memory plans grown), counted from the
// context's stats at the call's start; put into words when asked.
#pragma once

#include <cstdint>
#include <string>

#include "hostjit/runtime.h"

namespace hj {

class CallOutcome {
 public:
  enum class Way : uint8_t { None, Fast, Replay, New, Eager, Reserved };
  // Whether the call built its graph again: for device updates
  // (ForDevice; NoDevice when the backend could not give them), or back
  // for host updates (ForHost).
  enum class Rebuilt : uint8_t { No, ForDevice, ForHost, NoDevice };

  // A call starts (its way Eager until it says otherwise).
  void start(const hj_stats &now);
  void way(Way w) { way_ = w; }
  // Replay, New: why the program ran (again); a static string.
  void ranBecause(const char *why) { why_ = why; }
  void rebuilt(Rebuilt r) { rebuilt_ = r; }

  // The words: `now` the stats after the call; reason the call's reason
  // to run eagerly (Eager, Reserved); planBytes the bytes of the memory
  // plan a reservation sized, or -1 when it has none.
  const std::string &text(const hj_stats &now, const std::string &reason, int64_t planBytes) const;

 private:
  const char *rebuiltText() const;  // "to take its node updates ..."
  Way way_ = Way::None;
  const char *why_ = nullptr;
  Rebuilt rebuilt_ = Rebuilt::No;
  uint64_t updates_ = 0, device_ = 0, builds_ = 0, replans_ = 0;  // the stats at the call's start
  mutable std::string text_;
};

}  // namespace hj
