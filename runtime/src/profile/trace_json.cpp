// trace_json.cpp - a profiler's spans as a Chrome Trace Event file (the JSON
// object format, which Perfetto and chrome://tracing open): process 1 is
// the host (one track of calls), process 2 the device (one track per
// stream), flows join a call to its device work, counters follow memory.
#include <cstdio>
#include <memory>
#include <string>

#include "base/error.h"
#include "profile/profiler.h"

namespace hj {

namespace {

constexpr int kHost = 1, kDevice = 2, kCalls = 1;

std::string quoted(const std::string &s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

// Microseconds, as the format's ts and dur are.
std::string us(int64_t ns) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", static_cast<double>(ns) * 1e-3);
  return buf;
}

struct Out {
  std::FILE *f;
  bool first = true;
  void event(const std::string &body) {
    std::fputs(first ? "\n" : ",\n", f);
    first = false;
    std::fputs(body.c_str(), f);
  }
};

std::string meta(const char *what, int pid, int tid, const std::string &name) {
  return "{\"ph\":\"M\",\"name\":\"" + std::string(what) + "\",\"pid\":" + std::to_string(pid) +
         ",\"tid\":" + std::to_string(tid) + ",\"args\":{\"name\":" + quoted(name) + "}}";
}

}  // namespace

int32_t Profiler::writeTrace(const char *path, const char *backend) {
  if (int32_t st = resolve()) return st;
  std::unique_ptr<std::FILE, int (*)(std::FILE *)> f(std::fopen(path, "w"), &std::fclose);
  if (!f) return fail(HJ_ERR_INVALID_ARGUMENT, "hj_trace_write: cannot write '%s'", path);
  Out o{f.get()};
  std::fputs("{\"displayTimeUnit\":\"ns\",\"otherData\":{\"backend\":", o.f);
  std::fprintf(o.f, "%s,\"dropped_events\":%llu},\"traceEvents\":[", quoted(backend).c_str(),
               static_cast<unsigned long long>(dropped_));
  o.event(meta("process_name", kHost, 0, "hostjit host"));
  o.event(meta("thread_name", kHost, kCalls, "runtime calls"));
  o.event(meta("process_name", kDevice, 0, std::string("hostjit device (") + backend + ")"));
  uint32_t streams = 0;
  for (const Span &s : spans_)
    if (s.deviceBegin >= 0 && s.stream + 1 > streams) streams = s.stream + 1;
  for (uint32_t i = 0; i < streams; ++i)
    o.event(meta("thread_name", kDevice, static_cast<int>(i) + 1, "stream " + std::to_string(i)));
  uint64_t flow = 0;
  for (const Span &s : spans_) {
    const std::string &name = strings_[s.name], &site = strings_[s.site];
    std::string title = s.kind == SpanKind::Alloc || s.kind == SpanKind::Free
                            ? std::string(kindName(s.kind)) + " %" + name
                        : s.kind == SpanKind::Launch || s.kind == SpanKind::Custom || s.kind == SpanKind::Call
                            ? name
                            : name.empty() ? std::string(kindName(s.kind)) : std::string(kindName(s.kind)) + " " + name;
    std::string args = "\"stream\":" + std::to_string(s.stream);
    if (!site.empty()) args += ",\"site\":" + quoted(site);
    switch (s.kind) {
      case SpanKind::Launch:
        args += ",\"grid\":[" + std::to_string(s.dims[0]) + "," + std::to_string(s.dims[1]) + "," +
                std::to_string(s.dims[2]) + "],\"block\":[" + std::to_string(s.dims[3]) + "," +
                std::to_string(s.dims[4]) + "," + std::to_string(s.dims[5]) + "],\"shared_bytes\":" +
                std::to_string(s.dims[6]);
        break;
      case SpanKind::Alloc:
      case SpanKind::Collective: args += ",\"bytes\":" + std::to_string(s.bytes); break;
      case SpanKind::GraphBuild:
      case SpanKind::GraphUpdate:
      case SpanKind::GraphLaunch: args += ",\"nodes\":" + std::to_string(s.bytes); break;
      case SpanKind::Event: args += ",\"event\":" + std::to_string(s.bytes); break;
      default: break;
    }
    std::string common = "\"name\":" + quoted(title) + ",\"cat\":\"" + kindName(s.kind) + "\"";
    o.event("{\"ph\":\"X\"," + common + ",\"pid\":1,\"tid\":1,\"ts\":" + us(s.hostBegin) +
            ",\"dur\":" + us(s.hostEnd - s.hostBegin) + ",\"args\":{" + args + "}}");
    if (s.kind == SpanKind::Alloc || s.kind == SpanKind::Free)
      o.event("{\"ph\":\"C\",\"name\":\"memory\",\"pid\":1,\"ts\":" + us(s.hostEnd) + ",\"args\":{\"live_bytes\":" +
              std::to_string(s.live) + ",\"reserved_bytes\":" + std::to_string(s.reserved) + "}}");
    if (s.deviceBegin < 0) continue;
    std::string tid = std::to_string(s.stream + 1);
    // An allocation's device work is its memset (or NaN fill).
    if (s.kind == SpanKind::Alloc) common = "\"name\":" + quoted("memset %" + name) + ",\"cat\":\"memset\"";
    o.event("{\"ph\":\"X\"," + common + ",\"pid\":2,\"tid\":" + tid + ",\"ts\":" + us(s.deviceBegin) +
            ",\"dur\":" + us(s.deviceEnd - s.deviceBegin) + ",\"args\":{" + args + "}}");
    // The arrow from the call to its work: it starts inside the host slice
    // and ends at the device slice's start.
    std::string id = std::to_string(++flow);
    o.event("{\"ph\":\"s\",\"name\":\"queued\",\"cat\":\"flow\",\"id\":" + id + ",\"pid\":1,\"tid\":1,\"ts\":" +
            us(s.hostBegin) + "}");
    o.event("{\"ph\":\"f\",\"bp\":\"e\",\"name\":\"queued\",\"cat\":\"flow\",\"id\":" + id + ",\"pid\":2,\"tid\":" +
            tid + ",\"ts\":" + us(s.deviceBegin) + "}");
  }
  std::fputs("\n]}\n", o.f);
  bool bad = std::ferror(o.f) != 0;
  if (std::fclose(f.release()) != 0) bad = true;
  if (bad) return fail(HJ_ERR_INVALID_ARGUMENT, "hj_trace_write: writing '%s' failed", path);
  return HJ_OK;
}

}  // namespace hj
