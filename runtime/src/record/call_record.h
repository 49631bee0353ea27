// call_record.h - the call record: when it is on, every runtime call a
// program makes (alloc with size and flags, free, memset, fill, launch with
// grid, block and arguments, streams, events, collectives), as hj_record_get
// and hj_record_format give them. Parity tests compare two records line by line.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hostjit/runtime.h"

namespace hj {

// One recorded runtime call (see hj_record_entry).
struct RecordedCall {
  hj_record_entry entry{};
  std::string name;
  std::vector<hj_record_arg> args;
  std::vector<int64_t> dims;  // tensor-struct sizes and strides; args[i].dims point here
};

// What an entry says of the buffer it concerns.
struct RecordedBuffer {
  uint64_t id = 0, bytes = 0;
  uint32_t flags = 0, dtype = 0;
};

class CallRecord {
 public:
  explicit CallRecord(bool on) : on_(on) {}
  bool on() const { return on_; }
  // Turns recording on (clearing what was recorded) or off.
  void enable(bool on);

  // Appends an entry of hj_record_kind `kind`, made on `stream`, about
  // buffer `b` (or none) named `name`; the caller fills in the rest. Only
  // while on() (callers check).
  RecordedCall &add(int32_t kind, uint32_t stream, const RecordedBuffer *b, const char *name);
  // Appends an entry built aside, so that running out of memory half-way
  // leaves no half-made entry.
  void add(RecordedCall &&call);

  size_t size() const { return calls_.size(); }
  // Drops the entries after the first n (a graph-mode run that is rerun).
  void truncate(size_t n) { calls_.resize(n); }
  // hj_record_get and hj_record_format (-1 when index is out of range).
  int32_t get(uint64_t index, hj_record_entry *out) const;
  int64_t format(uint64_t index, char *buf, uint64_t cap) const;

 private:
  bool on_;
  std::vector<RecordedCall> calls_;
};

}  // namespace hj
