// call_order.h - where a graph-mode call's next operation goes: its stream
// and the operations it waits for (OpOrder), and the send/receive group
// it is inside, if any. The trace and the replay of a call share it.
#pragma once

#include <cstdint>

#include "graph/op_order.h"
#include "graph/planned_op.h"

namespace hj {

class CallOrder {
 public:
  // A call starts: stream 0, nothing before, no group open.
  void reset();
  uint32_t stream() const { return order_.stream(); }
  OpOrder &ops() { return order_; }

  // Streams and events become edges between the graph's nodes (docs in
  // graph_cache.h); inside a send/receive group they fail.
  int32_t setStream(uint32_t stream);
  int32_t event(uint32_t event, bool wait);
  int32_t streamSync();
  // Operation `index` is placed on the current stream after its frontier.
  void placed(uint32_t index) { order_.placed(index); }

  // The collective node a GROUP_BEGIN opened, -1 outside a group.
  int32_t group() const { return group_; }
  void openGroup(uint32_t index) { group_ = static_cast<int32_t>(index); }
  // GROUP_BEGIN and GROUP_END nest; the outermost END closes the group.
  void bracket(uint32_t kind);
  uint32_t depth() const { return depth_; }
  // HJ_OK outside a group; inside one, the error that `what` (or `op`)
  // may not be there: a group node holds only its sends and receives.
  int32_t outsideGroup(const char *what) const;
  int32_t outsideGroup(const PlannedOp &op) const;

 private:
  OpOrder order_;
  int32_t group_ = -1;
  uint32_t depth_ = 0;
};

}  // namespace hj
