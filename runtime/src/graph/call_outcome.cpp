// call_outcome.cpp - hj_graph_outcome's words.
#include "graph/call_outcome.h"

#include <cstdio>

namespace hj {

const char *CallOutcome::rebuiltText() const {
  switch (rebuilt_) {
    case Rebuilt::ForDevice: return "to take its node updates at launch";
    case Rebuilt::NoDevice: return "to take its node updates at launch, which its backend could not give it";
    default: return "to take its node updates from the host (the device fell behind its updates)";
  }
}

void CallOutcome::start(const hj_stats &now) {
  updates_ = now.graph_updates;
  device_ = now.graph_device_updates;
  builds_ = now.graph_builds;
  replans_ = now.graph_replans;
  rebuilt_ = Rebuilt::No;
  why_ = nullptr;
  way_ = Way::Eager;
}

const std::string &CallOutcome::text(const hj_stats &now, const std::string &reason, int64_t planBytes) const {
  unsigned long long updates = now.graph_updates - updates_;
  unsigned long long atLaunch = now.graph_device_updates - device_;
  char onDevice[48] = "";
  if (atLaunch) std::snprintf(onDevice, sizeof onDevice, " (%llu at launch)", atLaunch);
  char buf[360];
  switch (way_) {
    case Way::None: text_.clear(); return text_;
    case Way::Eager: text_ = "eager: " + reason; return text_;
    case Way::Reserved:
      if (!reason.empty()) {
        text_ = "reserved: its calls run eagerly: " + reason;
      } else if (planBytes >= 0) {
        std::snprintf(buf, sizeof buf, "reserved: the memory plan of its shape of work holds %lld bytes%s",
                      static_cast<long long>(planBytes), now.graph_replans > replans_ ? " (grown)" : "");
        text_ = buf;
      } else {
        text_ = "reserved";
      }
      return text_;
    case Way::Fast:
      if (rebuilt_ != Rebuilt::No)
        std::snprintf(buf, sizeof buf, "fast replay: graph built again %s", rebuiltText());
      else if (now.graph_builds > builds_)
        std::snprintf(buf, sizeof buf, "fast replay: graph built (the graph it was bound to held another signature's values)");
      else
        std::snprintf(buf, sizeof buf, "fast replay: %llu nodes updated%s", updates, onDevice);
      break;
    case Way::Replay:
      std::snprintf(buf, sizeof buf, "replay that ran the program (%s): %llu nodes updated%s", why_ ? why_ : "",
                    updates, onDevice);
      break;
    case Way::New: {
      bool built = now.graph_builds > builds_;
      char updated[96] = "";
      if (!built) std::snprintf(updated, sizeof updated, ", %llu nodes updated%s", updates, onDevice);
      std::string how = rebuilt_ != Rebuilt::No
                            ? std::string("bound to a cached graph of its shape of work, built again ") + rebuiltText()
                        : built ? "graph built"
                                : "bound to a cached graph of its shape of work";
      std::snprintf(buf, sizeof buf, "new signature: %s%s%s%s%s%s", how.c_str(), updated, now.graph_replans > replans_ ? ", memory plan grown" : "",
                    why_ ? "; the program ran again (" : "", why_ ? why_ : "", why_ ? ")" : "");
      break;
    }
  }
  text_ = buf;
  return text_;
}

}  // namespace hj
