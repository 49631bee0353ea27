// op_order.cpp - the edges between a graph-mode call's operations.
#include "graph/op_order.h"

#include <algorithm>

namespace hj {

namespace {

// Adds `more` to the sorted set `to`.
void merge(std::vector<uint32_t> &to, const std::vector<uint32_t> &more) {
  for (uint32_t x : more) {
    auto it = std::lower_bound(to.begin(), to.end(), x);
    if (it == to.end() || *it != x) to.insert(it, x);
  }
}

}  // namespace

void OpOrder::reset() {
  stream_ = 0;
  frontier_.assign(1, {});
  synced_.clear();
  eventDeps_.clear();
  lastCollective_ = -1;
}

void OpOrder::setStream(uint32_t stream) {
  stream_ = stream;
  if (frontier_.size() <= stream) frontier_.resize(stream + 1, synced_);
}

void OpOrder::event(uint32_t event, bool wait) {
  if (eventDeps_.size() <= event) eventDeps_.resize(event + 1);
  if (wait)
    merge(frontier_[stream_], eventDeps_[event]);
  else
    eventDeps_[event] = frontier_[stream_];
}

void OpOrder::streamSync() {
  std::vector<uint32_t> done = frontier_[stream_];
  merge(synced_, done);
  for (std::vector<uint32_t> &f : frontier_) merge(f, done);
}

void OpOrder::collective(uint32_t index) {
  if (lastCollective_ >= 0) merge(frontier_[stream_], {static_cast<uint32_t>(lastCollective_)});
  lastCollective_ = static_cast<int32_t>(index);
}

}  // namespace hj
