// profiler.h - what a profiled context's calls did and when: each runtime
// call's host time, the device time of the work it queued (timing events
// on its stream), memory counters, program-call ranges and graph-mode
// builds, updates and launches; aggregated per kind, name and site
// (hj_profile_get) and kept as events for a trace (hj_trace_write).
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <string>
#include <unordered_map>
#include <vector>

#include "backend/backend.h"
#include "hostjit/runtime.h"

namespace hj {

// What a span is; the names are hj_profile_row.kind's and the trace's
// categories (kindName).
enum class SpanKind : uint8_t {
  Call, Alloc, Free, Launch, Matmul, Custom, Collective, Event, Stream, Sync, GraphBuild, GraphUpdate, GraphLaunch
};
const char *kindName(SpanKind k);

// One runtime call (or program call, or graph-mode step) as the trace shows it.
struct Span {
  SpanKind kind = SpanKind::Launch;
  uint32_t stream = 0;
  uint32_t name = 0, site = 0;  // interned strings
  uint32_t row = 0;             // its aggregate row
  int32_t depth = 0;            // Call: nesting depth
  int64_t hostBegin = 0, hostEnd = 0;      // ns since the profiler's origin
  int64_t deviceBegin = -1, deviceEnd = -1;  // ns, the same clock; -1: no device work timed
  uint64_t bytes = 0;                       // Alloc, Free, Collective, GraphUpdate (nodes), GraphLaunch (nodes)
  uint32_t dims[7] = {};                    // Launch: grid, block, shared bytes
  uint64_t live = 0, reserved = 0;          // Alloc, Free: the memory counters after it
};

// One row of the profile: every span of one kind, name and site.
struct ProfileRow {
  SpanKind kind = SpanKind::Launch;
  uint32_t name = 0, site = 0;
  uint64_t calls = 0;
  std::vector<float> hostUs, deviceUs;
};

class Profiler {
 public:
  // maxSpans: spans kept for the trace (HOSTJIT_TRACE_EVENTS); rows count
  // every call whatever the limit.
  Profiler(Backend &backend, const hj_stats &stats, size_t maxSpans);
  ~Profiler();
  Profiler(const Profiler &) = delete;
  Profiler &operator=(const Profiler &) = delete;

  int64_t now() const {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - origin_).count();
  }

  // A span in progress: begin() takes the host time; deviceBegin() and
  // deviceEnd() bracket the device work it queues on the current stream;
  // end() takes the host time again and files it.
  struct Open {
    Span span;
    void *start = nullptr, *stop = nullptr;  // timing events, when device work is timed
  };
  Open begin(SpanKind kind, const char *name, const char *site, uint32_t stream);
  void deviceBegin(Open &o);
  void deviceEnd(Open &o);
  // Files the span (with `failed`, only its host time counts: nothing was queued).
  void end(Open &o, bool failed = false);

  // Buffer names, so that a free names what it frees.
  void named(void *ptr, const char *name) { bufferNames_[ptr] = intern(name); }
  const char *nameOf(void *ptr) const {
    auto it = bufferNames_.find(ptr);
    return it == bufferNames_.end() ? "" : strings_[it->second].c_str();
  }

  // Program-call ranges (hj_range_push/pop), nested; the innermost's name
  // ("" outside any) names graph mode's spans.
  void push(const char *name);
  void pop();
  const char *currentCall() const { return ranges_.empty() ? "" : strings_[ranges_.back().span.name].c_str(); }

  // Waits for the timed work, then makes table(): a row per kind, name and
  // site that was called, sorted by device time, then host time, largest
  // first (hj_profile_count).
  int32_t makeTable();
  const std::vector<hj_profile_row> &table() const { return table_; }
  // Writes the spans as a Chrome trace (profile/trace_json.cpp); backend
  // names the device's process.
  int32_t writeTrace(const char *path, const char *backend);
  // Forgets every span and row.
  int32_t clear();

 private:
  uint32_t intern(const char *s);
  uint32_t rowOf(SpanKind kind, uint32_t name, uint32_t site);
  int32_t takeEvent(void **out);
  // Waits for every pending device time and files it; then, with the
  // device idle, sets a new anchor.
  int32_t resolve();
  int32_t anchor();

  Backend &backend_;
  const hj_stats &stats_;
  size_t maxSpans_;
  std::chrono::steady_clock::time_point origin_ = std::chrono::steady_clock::now();
  std::deque<std::string> strings_;  // a deque: the rows' and table's pointers into it stay valid as it grows
  std::unordered_map<std::string, uint32_t> stringIds_;
  std::unordered_map<const char *, uint32_t> byPointer_;  // a cache of stringIds_, checked by value
  std::unordered_map<uint64_t, uint32_t> rowIds_;
  std::unordered_map<void *, uint32_t> bufferNames_;
  std::vector<ProfileRow> rows_;
  std::vector<hj_profile_row> table_;
  std::vector<Span> spans_;
  uint64_t dropped_ = 0;  // spans past maxSpans_
  // Device times not yet read: the span (or SIZE_MAX when not kept) and row
  // they belong to, and their events.
  struct Pending {
    size_t span;
    uint32_t row;
    void *start, *stop;
  };
  std::vector<Pending> pending_;
  std::vector<void *> freeEvents_, allEvents_;
  void *anchor_ = nullptr;  // recorded with the device idle at anchorNs_
  int64_t anchorNs_ = -1;
  std::vector<Open> ranges_;  // program calls in progress
};

// A span around a block of graph mode (a build, the node updates, a
// launch) named by the program call it is in; nothing when the profiler is
// NULL. done(st) ends it; leaving the scope first ends it as failed.
class ProfileScope {
 public:
  ProfileScope(Profiler *p, SpanKind kind, uint64_t count, uint32_t stream, bool device) : p_(p), device_(device) {
    if (!p_) return;
    o_ = p_->begin(kind, p_->currentCall(), "", stream);
    o_.span.bytes = count;
    if (device_) p_->deviceBegin(o_);
  }
  ~ProfileScope() { done(HJ_ERR_INTERNAL); }
  ProfileScope(const ProfileScope &) = delete;
  ProfileScope &operator=(const ProfileScope &) = delete;
  int32_t done(int32_t st) {
    if (!p_) return st;
    if (device_) p_->deviceEnd(o_);
    p_->end(o_, st != HJ_OK);
    p_ = nullptr;
    return st;
  }

 private:
  Profiler *p_;
  bool device_;
  Profiler::Open o_;
};

}  // namespace hj
