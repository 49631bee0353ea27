// call_order.cpp - streams, events and send/receive groups of a graph-mode
// call.
#include "graph/call_order.h"

#include "base/error.h"

namespace hj {

void CallOrder::reset() {
  order_.reset();
  group_ = -1;
  depth_ = 0;
}

int32_t CallOrder::setStream(uint32_t stream) {
  if (group_ >= 0 && stream != order_.stream()) return outsideGroup("a change of stream");
  order_.setStream(stream);
  return HJ_OK;
}

int32_t CallOrder::event(uint32_t event, bool wait) {
  if (int32_t st = outsideGroup(wait ? "a wait for an event" : "an event record")) return st;
  order_.event(event, wait);
  return HJ_OK;
}

int32_t CallOrder::streamSync() {
  if (int32_t st = outsideGroup("a stream sync")) return st;
  order_.streamSync();
  return HJ_OK;
}

void CallOrder::bracket(uint32_t kind) {
  if (kind == HJ_COLL_GROUP_BEGIN) ++depth_;
  if (kind == HJ_COLL_GROUP_END && depth_ > 0 && --depth_ == 0) group_ = -1;
}

int32_t CallOrder::outsideGroup(const char *what) const {
  if (group_ < 0) return HJ_OK;
  return fail(HJ_ERR_INVALID_ARGUMENT,
              "graph mode: %s inside a send/receive group (between its GROUP_BEGIN and GROUP_END); a group node holds "
              "only its sends and receives",
              what);
}

int32_t CallOrder::outsideGroup(const PlannedOp &op) const {
  if (group_ < 0) return HJ_OK;
  return outsideGroup(op.kind() == GraphOpKind::Kernel   ? "a launch"
                      : op.kind() == GraphOpKind::Custom ? "a custom call"
                                                         : "a memset or fill");
}

}  // namespace hj
