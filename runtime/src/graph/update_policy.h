// update_policy.h - when graph mode builds an executable graph again to take
// its kernel nodes' updates at launch (device updates), or back for host
// updates: HOSTJIT_GRAPH_DEVICE_UPDATES's rule, kept per executable graph,
// free of CUDA and of the graph cache so that it is tested alone.
#pragma once

#include <cstdint>
#include <functional>

#include "base/settings.h"

namespace hj {

// Of a graph's last 8 launches, those needing node updates after which,
// under HOSTJIT_GRAPH_DEVICE_UPDATES=auto, it is built again to take them
// at launch: the rebuild costs about one instantiation and upload (50 to
// 250 us, bench/RESULTS.md); host updates cost 0.36 us a node (about 2
// with a new grid, BM_ShapeUpdate) on every such call.
inline constexpr int kDeviceUpdatesAfter = 4;

class UpdatePolicy {
 public:
  enum class Rebuild : uint8_t {
    No,
    ForDevice,  // nodes the host keeps updating: taken at launch from now on
    ForHost,    // the device fell behind its updates: host updates, for good
  };

  // The graph's program changes sizes on most calls (hj_graph_sizes_change):
  // under kAuto its first build asks for device updates, as a rebuild
  // would after kDeviceUpdatesAfter launches.
  void expectUpdates() { askedDevice_ = true; }
  // Whether the graph's next build asks the backend for device updates.
  bool wantDevice(Settings::DeviceUpdates mode) const {
    return mode == Settings::kAlways || (mode == Settings::kAuto && askedDevice_ && !hostOnly_);
  }

  // Before a launch of a built graph that needs node updates (`updates`) or
  // not. deviceUpdates: the graph takes them at launch now; behind: asks
  // the graph whether its launches found the device many launches behind
  // taking earlier updates (asked only of a graph that takes them, since
  // asking clears it). Under kAuto, says whether to build it again.
  Rebuild beforeLaunch(Settings::DeviceUpdates mode, bool updates, bool deviceUpdates,
                       const std::function<bool()> &behind);
  // After the updates of a launch: whether one gave a node a new grid or
  // block.
  void updated(bool anyGrid) { gridLaunches_ = static_cast<uint8_t>(gridLaunches_ << 1 | anyGrid); }

 private:
  bool askedDevice_ = false, hostOnly_ = false;
  // Of the last 8 launches, those that needed node updates and those that
  // gave a node a new grid or block (a bit each, newest lowest).
  uint8_t updatedLaunches_ = 0, gridLaunches_ = 0;
};

}  // namespace hj
