// op_order.h - the order of a graph-mode call's operations: per program
// stream, the operations its next one waits for; an event's wait as an
// edge from what preceded its record; a stream sync as an edge from that
// stream's work to every stream's next operation; collectives in program
// order whatever their streams. Free of CUDA, tested alone.
#pragma once

#include <cstdint>
#include <vector>

namespace hj {

class OpOrder {
 public:
  OpOrder() { reset(); }
  // A call starts: stream 0, nothing before.
  void reset();
  uint32_t stream() const { return stream_; }
  // The program's operations go to `stream` from now on.
  void setStream(uint32_t stream);
  // hj_event_record (wait false) or hj_event_wait of `event` on the stream.
  void event(uint32_t event, bool wait);
  // hj_stream_sync of the stream: every stream's next operation follows
  // its work so far.
  void streamSync();
  // What the stream's next operation waits for (sorted indices).
  const std::vector<uint32_t> &frontier() const { return frontier_[stream_]; }
  // Operation `index` placed on the stream: the stream's next waits for it.
  void placed(uint32_t index) { frontier_[stream_].assign(1, index); }
  // Collective operation `index` is about to be placed: it follows the
  // previous collective, so every rank communicates in the program's order.
  void collective(uint32_t index);

 private:
  uint32_t stream_ = 0;
  std::vector<std::vector<uint32_t>> frontier_;   // per stream: what its next operation depends on
  std::vector<std::vector<uint32_t>> eventDeps_;  // per event: its stream's frontier at its last record
  std::vector<uint32_t> synced_;                  // what every stream's work follows (stream syncs)
  int32_t lastCollective_ = -1;
};

}  // namespace hj
