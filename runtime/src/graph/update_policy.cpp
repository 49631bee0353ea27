// update_policy.cpp - HOSTJIT_GRAPH_DEVICE_UPDATES=auto's rule.
#include "graph/update_policy.h"

#include <bit>

namespace hj {

UpdatePolicy::Rebuild UpdatePolicy::beforeLaunch(Settings::DeviceUpdates mode, bool updates, bool deviceUpdates,
                                                 const std::function<bool()> &behind) {
  updatedLaunches_ = static_cast<uint8_t>(updatedLaunches_ << 1 | updates);
  if (mode != Settings::kAuto) return Rebuild::No;
  if (deviceUpdates) {
    // The device 16 launches behind the updates: it is what the calls wait
    // for, and its updater adds to its time. Where the host would set
    // arguments only (no grid changed in the last 8 launches), host
    // updates cost less than that; a new grid costs the host 1.5 to 2 us a
    // node, more than the updater costs the device.
    if (behind() && gridLaunches_ == 0) {
      hostOnly_ = true;
      return Rebuild::ForHost;
    }
    return Rebuild::No;
  }
  if (updates && !askedDevice_ && std::popcount(updatedLaunches_) >= kDeviceUpdatesAfter) {
    askedDevice_ = true;
    return Rebuild::ForDevice;
  }
  return Rebuild::No;
}

}  // namespace hj
