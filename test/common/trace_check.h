// trace_check.h - checks a trace from hj_trace_write against the Chrome
// Trace Event format's rules, and its host events against a call record;
// shared by the unit tests (host backend) and the GPU tests.
#pragma once

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "hostjit/exec/runtime_handles.h"
#include "hostjit/runtime.h"

namespace hostjit::test {

// rt's trace (Runtime::writeTrace) through a file named after `what` in
// the temporary directory, read back and removed; when it cannot be
// written, a JSON string saying why (which traceProblems reports).
inline nlohmann::json traceOf(const Runtime &rt, const std::string &what) {
  std::string path = (std::filesystem::temp_directory_path() / ("hostjit_trace_" + what + ".json")).string();
  if (auto ok = rt.writeTrace(path); !ok) return ok.error().message;
  std::ifstream in(path);
  nlohmann::json t = nlohmann::json::parse(in, nullptr, false);
  std::filesystem::remove(path);
  return t;
}

// "" when the trace keeps the format's rules as hostjit uses them: an
// object with a traceEvents array; each event a phase hostjit writes (X
// complete, M metadata, C counter, s/f flow) with the fields that phase
// needs, of the right types; durations and times not negative; each flow's
// start and finish paired by id; every device event on a track named by a
// thread_name record.
inline std::string traceProblems(const nlohmann::json &t) {
  if (t.is_string()) return t.get<std::string>();
  if (!t.is_object()) return "not a JSON object";
  if (!t.contains("traceEvents") || !t["traceEvents"].is_array()) return "no traceEvents array";
  std::map<uint64_t, int> flows;
  std::set<std::pair<int, int>> named, used;
  size_t i = 0;
  for (const auto &e : t["traceEvents"]) {
    std::string at = "event " + std::to_string(i++) + ": ";
    if (!e.is_object() || !e.contains("ph") || !e["ph"].is_string()) return at + "no phase";
    std::string ph = e["ph"];
    if (!e.contains("pid") || !e["pid"].is_number_integer()) return at + "no integer pid";
    if (ph != "M" && ph != "C" && ph != "X" && ph != "s" && ph != "f") return at + "unknown phase " + ph;
    if (!e.contains("name") || !e["name"].is_string()) return at + "no name";
    if (ph == "M") {
      if (!e.contains("args") || !e["args"].contains("name") || !e["args"]["name"].is_string())
        return at + "metadata without args.name";
      if (e["name"] == "thread_name") named.insert({e["pid"].get<int>(), e["tid"].get<int>()});
      continue;
    }
    if (!e.contains("ts") || !e["ts"].is_number() || e["ts"].get<double>() < 0) return at + "no time";
    if (ph == "C") {
      if (!e.contains("args") || !e["args"].is_object() || e["args"].empty()) return at + "counter without values";
      for (const auto &[k, v] : e["args"].items())
        if (!v.is_number()) return at + "counter " + k + " is not a number";
      continue;
    }
    if (!e.contains("tid") || !e["tid"].is_number_integer()) return at + "no integer tid";
    used.insert({e["pid"].get<int>(), e["tid"].get<int>()});
    if (ph == "X") {
      if (!e.contains("dur") || !e["dur"].is_number() || e["dur"].get<double>() < 0) return at + "no duration";
      if (!e.contains("cat") || !e["cat"].is_string()) return at + "no category";
      continue;
    }
    if (!e.contains("id") || !e["id"].is_number_integer()) return at + "flow without id";
    int &state = flows[e["id"].get<uint64_t>()];
    if (ph == "s") {
      if (state != 0) return at + "flow id used twice";
      state = 1;
    } else {
      if (state != 1) return at + "flow finish without its start";
      state = 2;
    }
  }
  for (const auto &[id, state] : flows)
    if (state != 2) return "flow " + std::to_string(id) + " never finished";
  for (const auto &track : used)
    if (!named.count(track))
      return "track pid " + std::to_string(track.first) + " tid " + std::to_string(track.second) + " has no name";
  return "";
}

// The trace's host events of runtime calls, in time order.
inline std::vector<nlohmann::json> hostCalls(const nlohmann::json &t) {
  std::vector<nlohmann::json> out;
  for (const auto &e : t["traceEvents"])
    if (e["ph"] == "X" && e["pid"] == 1 && e["cat"] != "call") out.push_back(e);
  std::stable_sort(out.begin(), out.end(),
                   [](const nlohmann::json &a, const nlohmann::json &b) { return a["ts"].get<double>() < b["ts"].get<double>(); });
  return out;
}

// "" when the trace's host events are the record's calls one for one: the
// same kinds in the same order (memsets, fills and uses are parts of other
// calls, not calls), the same buffers (names, bytes), kernels, grids and
// streams. Only for a context whose record and profile both began before
// the first call.
inline std::string traceMatchesRecord(const nlohmann::json &t, hj_context *ctx) {
  std::vector<nlohmann::json> calls = hostCalls(t);
  size_t k = 0;
  uint64_t n = hj_record_size(ctx);
  for (uint64_t i = 0; i < n; ++i) {
    hj_record_entry r;
    if (hj_record_get(ctx, i, &r) != HJ_OK) return "record entry " + std::to_string(i) + " unreadable";
    const char *cat = nullptr;
    switch (r.kind) {
      case HJ_REC_ALLOC: cat = "alloc"; break;
      case HJ_REC_FREE: cat = "free"; break;
      case HJ_REC_LAUNCH: cat = "launch"; break;
      case HJ_REC_STREAM: cat = "stream"; break;
      case HJ_REC_EVENT_RECORD:
      case HJ_REC_EVENT_WAIT: cat = "event"; break;
      case HJ_REC_SYNC: cat = "sync"; break;
      case HJ_REC_COLLECTIVE: cat = "collective"; break;
      case HJ_REC_MATMUL: cat = "matmul"; break;
      case HJ_REC_CUSTOM_CALL: cat = "custom_call"; break;
      default: continue;
    }
    std::string at = "record entry " + std::to_string(i) + " (" + cat + "): ";
    if (k >= calls.size()) return at + "the trace has no event for it";
    const nlohmann::json &e = calls[k++];
    if (e["cat"] != cat) return at + "the trace's event is " + e["cat"].get<std::string>();
    if (e["args"]["stream"] != r.stream) return at + "on another stream in the trace";
    std::string name = r.name ? r.name : "";
    if ((r.kind == HJ_REC_ALLOC || r.kind == HJ_REC_FREE) && e["name"] != std::string(cat) + " %" + name)
      return at + "named " + e["name"].get<std::string>() + " in the trace, %" + name + " in the record";
    if (r.kind == HJ_REC_ALLOC && e["args"]["bytes"] != r.bytes) return at + "bytes differ";
    if (r.kind == HJ_REC_LAUNCH) {
      if (e["name"] != name) return at + "kernel " + e["name"].get<std::string>() + " in the trace, " + name;
      for (int d = 0; d < 3; ++d)
        if (e["args"]["grid"][d] != r.dims[d] || e["args"]["block"][d] != r.dims[3 + d]) return at + "dims differ";
    }
  }
  if (k != calls.size()) return "the trace has " + std::to_string(calls.size() - k) + " calls more than the record";
  return "";
}

}  // namespace hostjit::test
