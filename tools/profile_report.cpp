// profile_report.cpp - `hostjit run --profile` and `--trace`: a mode's
// profile printed as a table and kept for --stats json, its trace written.
#include <filesystem>
#include <nlohmann/json.hpp>

#include "cli.h"
#include "output.h"

namespace hostjit::cli {

namespace {

// FILE for one mode of one rank: FILE.MODE.json with several modes,
// FILE.rankR.json for rank R.
std::string tracePath(const RunOptions &o, const char *mode, size_t modes) {
  std::filesystem::path p(o.trace);
  std::string ext = p.extension().string();
  std::string stem = (p.parent_path() / p.stem()).string();
  if (modes > 1) stem += std::string(".") + mode;
  if (o.rank >= 0) stem += ".rank" + std::to_string(o.rank);
  return stem + (ext.empty() ? ".json" : ext);
}

}  // namespace

int reportProfile(const char *mode, hj_context *ctx, const RunOptions &o, size_t modes, nlohmann::json *json) {
  uint64_t n = 0;
  if (int32_t st = hj_profile_count(ctx, &n)) return fromError(runtimeError(st), std::string(mode) + ": profile: ");
  *json = nlohmann::json::array();
  if (o.profile) {
    say("%s profile: %llu rows; device time of the work each call queued, from events on its stream; us\n", mode,
        static_cast<unsigned long long>(n));
    say("%s   %12s %9s %9s %9s %8s %11s  %-12s %s\n", mode, "device total", "median", "min", "max", "calls",
        "host median", "kind", "name (site)");
  }
  for (uint64_t i = 0; i < n; ++i) {
    hj_profile_row r;
    if (int32_t st = hj_profile_get(ctx, i, &r)) return fromError(runtimeError(st), std::string(mode) + ": profile: ");
    json->push_back({{"kind", r.kind},
                     {"name", r.name},
                     {"site", r.site},
                     {"calls", r.calls},
                     {"timed", r.timed},
                     {"device_us_total", r.device_us_total},
                     {"device_us_median", r.device_us_median},
                     {"device_us_min", r.device_us_min},
                     {"device_us_max", r.device_us_max},
                     {"host_us_total", r.host_us_total},
                     {"host_us_median", r.host_us_median}});
    if (!o.profile) continue;
    bool buffer = std::string(r.kind) == "alloc" || std::string(r.kind) == "free";
    std::string what = *r.name ? (buffer ? "%" : "") + std::string(r.name) : "-";
    if (*r.site) what += std::string(" (") + r.site + ")";
    if (r.timed)
      say("%s   %12.2f %9.2f %9.2f %9.2f %8llu %11.2f  %-12s %s\n", mode, r.device_us_total, r.device_us_median,
          r.device_us_min, r.device_us_max, static_cast<unsigned long long>(r.calls), r.host_us_median, r.kind,
          what.c_str());
    else
      say("%s   %12s %9s %9s %9s %8llu %11.2f  %-12s %s\n", mode, "-", "-", "-", "-",
          static_cast<unsigned long long>(r.calls), r.host_us_median, r.kind, what.c_str());
  }
  if (!o.trace.empty()) {
    std::string path = tracePath(o, mode, modes);
    if (int32_t st = hj_trace_write(ctx, path.c_str())) return fromError(runtimeError(st), std::string(mode) + ": ");
    say("%s: trace written to %s\n", mode, path.c_str());
  }
  return kOk;
}

}  // namespace hostjit::cli
