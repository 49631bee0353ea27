// profiler.cpp - spans filed, device times read from timing events, rows.
#include "profile/profiler.h"

#include <algorithm>
#include <cstring>

#include "base/error.h"

namespace hj {

namespace {

// Timing-event pairs in flight before their times are read (which waits).
constexpr size_t kMaxPending = 1024;

double total(const std::vector<float> &v) {
  double t = 0;
  for (float x : v) t += x;
  return t;
}

double median(std::vector<float> v) {
  if (v.empty()) return 0;
  auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  if (v.size() % 2) return *mid;
  return (static_cast<double>(*mid) + *std::max_element(v.begin(), mid)) / 2;
}

}  // namespace

const char *kindName(SpanKind k) {
  switch (k) {
    case SpanKind::Call: return "call";
    case SpanKind::Alloc: return "alloc";
    case SpanKind::Free: return "free";
    case SpanKind::Launch: return "launch";
    case SpanKind::Matmul: return "matmul";
    case SpanKind::Custom: return "custom_call";
    case SpanKind::Collective: return "collective";
    case SpanKind::Event: return "event";
    case SpanKind::Stream: return "stream";
    case SpanKind::Sync: return "sync";
    case SpanKind::GraphBuild: return "graph_build";
    case SpanKind::GraphUpdate: return "graph_update";
    case SpanKind::GraphLaunch: return "graph_launch";
  }
  return "?";
}

Profiler::Profiler(Backend &backend, const hj_stats &stats, size_t maxSpans)
    : backend_(backend), stats_(stats), maxSpans_(maxSpans) {
  intern("");
}

Profiler::~Profiler() {
  for (void *e : allEvents_) backend_.destroyEvent(e);
}

uint32_t Profiler::intern(const char *s) {
  if (!s) s = "";
  if (auto it = byPointer_.find(s); it != byPointer_.end() && strings_[it->second] == s) return it->second;
  auto [it, added] = stringIds_.try_emplace(s, static_cast<uint32_t>(strings_.size()));
  if (added) strings_.emplace_back(s);
  byPointer_[s] = it->second;
  return it->second;
}

uint32_t Profiler::rowOf(SpanKind kind, uint32_t name, uint32_t site) {
  uint64_t key = (uint64_t{static_cast<uint8_t>(kind)} << 56) ^ (uint64_t{name} << 28) ^ site;
  auto [it, added] = rowIds_.try_emplace(key, static_cast<uint32_t>(rows_.size()));
  if (added) {
    ProfileRow r;
    r.kind = kind;
    r.name = name;
    r.site = site;
    rows_.push_back(std::move(r));
  }
  return it->second;
}

Profiler::Open Profiler::begin(SpanKind kind, const char *name, const char *site, uint32_t stream) {
  Open o;
  o.span.kind = kind;
  o.span.stream = stream;
  o.span.name = intern(name);
  o.span.site = intern(site);
  o.span.row = rowOf(kind, o.span.name, o.span.site);
  o.span.hostBegin = now();
  return o;
}

int32_t Profiler::takeEvent(void **out) {
  if (freeEvents_.empty()) {
    void *e = nullptr;
    if (int32_t st = backend_.createTimingEvent(&e)) return st;
    allEvents_.push_back(e);
    freeEvents_.push_back(e);
  }
  *out = freeEvents_.back();
  freeEvents_.pop_back();
  return HJ_OK;
}

int32_t Profiler::anchor() {
  if (!anchor_) {
    if (int32_t st = takeEvent(&anchor_)) return st;
  }
  // With the device idle, the anchor's record runs between the host's
  // record call and the host seeing it done: its time on the host clock is
  // taken as the middle (the error is at most half that round trip, a few
  // microseconds on CUDA, nothing on the host backend).
  if (int32_t st = backend_.synchronize()) return st;
  int64_t before = now();
  if (int32_t st = backend_.recordEvent(anchor_)) return st;
  float ms = 0;
  if (int32_t st = backend_.elapsedMs(anchor_, anchor_, &ms)) return st;
  anchorNs_ = before + (now() - before) / 2;
  return HJ_OK;
}

void Profiler::deviceBegin(Open &o) {
  if (pending_.size() >= kMaxPending && resolve() != HJ_OK) return;
  if (anchorNs_ < 0 && anchor() != HJ_OK) return;
  if (takeEvent(&o.start) != HJ_OK) return;
  if (takeEvent(&o.stop) != HJ_OK || backend_.recordEvent(o.start) != HJ_OK) {
    freeEvents_.push_back(o.start);
    if (o.stop) freeEvents_.push_back(o.stop);
    o.start = o.stop = nullptr;
  }
}

void Profiler::deviceEnd(Open &o) {
  if (o.start && backend_.recordEvent(o.stop) != HJ_OK) {
    freeEvents_.push_back(o.start);
    freeEvents_.push_back(o.stop);
    o.start = o.stop = nullptr;
  }
}

void Profiler::end(Open &o, bool failed) {
  Span &s = o.span;
  s.hostEnd = now();
  if (s.kind == SpanKind::Alloc || s.kind == SpanKind::Free) {
    s.live = stats_.live_bytes;
    s.reserved = stats_.reserved_bytes;
  }
  ProfileRow &r = rows_[s.row];
  ++r.calls;
  r.hostUs.push_back(static_cast<float>(s.hostEnd - s.hostBegin) * 1e-3f);
  size_t at = SIZE_MAX;
  if (spans_.size() < maxSpans_) {
    at = spans_.size();
    spans_.push_back(s);
  } else {
    ++dropped_;
  }
  if (!o.start) return;
  if (failed) {
    freeEvents_.push_back(o.start);
    freeEvents_.push_back(o.stop);
    return;
  }
  pending_.push_back(Pending{at, s.row, o.start, o.stop});
}

void Profiler::push(const char *name) {
  ranges_.push_back(begin(SpanKind::Call, name, "", backend_.currentStream()));
  ranges_.back().span.depth = static_cast<int32_t>(ranges_.size()) - 1;
}

void Profiler::pop() {
  if (ranges_.empty()) return;
  Open o = ranges_.back();
  ranges_.pop_back();
  end(o);
}

int32_t Profiler::resolve() {
  int32_t status = HJ_OK;
  for (const Pending &p : pending_) {
    float begin = 0, length = 0;
    int32_t st = backend_.elapsedMs(anchor_, p.start, &begin);
    if (st == HJ_OK) st = backend_.elapsedMs(p.start, p.stop, &length);
    freeEvents_.push_back(p.start);
    freeEvents_.push_back(p.stop);
    if (st != HJ_OK) {
      status = st;
      continue;
    }
    rows_[p.row].deviceUs.push_back(length * 1e3f);
    if (p.span != SIZE_MAX) {
      Span &s = spans_[p.span];
      s.deviceBegin = anchorNs_ + static_cast<int64_t>(static_cast<double>(begin) * 1e6);
      s.deviceEnd = s.deviceBegin + static_cast<int64_t>(static_cast<double>(length) * 1e6);
    }
  }
  pending_.clear();
  if (status != HJ_OK) return status;
  // Times are read against the anchor as floats: a new one keeps them fine.
  return anchorNs_ >= 0 ? anchor() : HJ_OK;
}

int32_t Profiler::makeTable() {
  if (int32_t st = resolve()) return st;
  table_.clear();
  for (const ProfileRow &r : rows_) {
    if (!r.calls) continue;
    hj_profile_row t{};
    t.kind = kindName(r.kind);
    t.name = strings_[r.name].c_str();
    t.site = strings_[r.site].c_str();
    t.calls = r.calls;
    t.timed = r.deviceUs.size();
    t.device_us_total = total(r.deviceUs);
    t.device_us_median = median(r.deviceUs);
    if (!r.deviceUs.empty()) {
      t.device_us_min = *std::min_element(r.deviceUs.begin(), r.deviceUs.end());
      t.device_us_max = *std::max_element(r.deviceUs.begin(), r.deviceUs.end());
    }
    t.host_us_total = total(r.hostUs);
    t.host_us_median = median(r.hostUs);
    table_.push_back(t);
  }
  std::stable_sort(table_.begin(), table_.end(), [](const hj_profile_row &a, const hj_profile_row &b) {
    if (a.device_us_total != b.device_us_total) return a.device_us_total > b.device_us_total;
    return a.host_us_total > b.host_us_total;
  });
  return HJ_OK;
}

int32_t Profiler::clear() {
  int32_t st = resolve();
  spans_.clear();
  table_.clear();
  for (ProfileRow &r : rows_) {
    r.calls = 0;
    r.hostUs.clear();
    r.deviceUs.clear();
  }
  dropped_ = 0;
  return st;
}

}  // namespace hj
