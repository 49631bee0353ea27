// profile_report.cpp - `hostjit run --profile` and `--trace`: a mode's
// profile printed as a table and kept for --stats json, its trace written.
#include <algorithm>
#include <filesystem>
#include <map>
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

// When a name has several sites (GPT-2's layers), the rows summed per kind
// and name (every buffer's allocations as one), by device time: what share
// of the mode's device time each kernel or library call takes.
void printByName(const char *mode, const std::vector<hj_profile_row> &rows) {
  struct Sum {
    uint64_t calls = 0, sites = 0;
    double device = 0, host = 0;
  };
  std::map<std::pair<std::string, std::string>, Sum> sums;
  double device = 0;
  for (const hj_profile_row &r : rows) {
    bool buffer = std::string(r.kind) == "alloc" || std::string(r.kind) == "free";
    Sum &s = sums[{r.kind, buffer ? "(every buffer)" : r.name}];  // buffers: one line per kind
    s.calls += r.calls;
    ++s.sites;
    s.device += r.device_us_total;
    s.host += r.host_us_total;
    device += r.device_us_total;
  }
  bool several = false;  // some kernel, library call or collective has several sites
  for (const auto &[key, sum] : sums)
    several |= sum.sites > 1 && key.first != "alloc" && key.first != "free";
  if (!several) return;
  std::vector<std::pair<std::pair<std::string, std::string>, Sum>> order(sums.begin(), sums.end());
  std::stable_sort(order.begin(), order.end(), [](const auto &a, const auto &b) {
    return a.second.device != b.second.device ? a.second.device > b.second.device : a.second.host > b.second.host;
  });
  say("%s profile by name: %zu names; totals over every site and call; us\n", mode, order.size());
  say("%s   %12s %7s %12s %8s %6s  %-12s %s\n", mode, "device total", "share", "host total", "calls", "sites", "kind",
      "name");
  for (const auto &[key, s] : order) {
    std::string name = key.second.empty() ? "-" : key.second;
    char share[16] = "-";
    if (device > 0 && s.device > 0) std::snprintf(share, sizeof share, "%.1f%%", 100 * s.device / device);
    say("%s   %12.2f %7s %12.2f %8llu %6llu  %-12s %s\n", mode, s.device, share, s.host,
        static_cast<unsigned long long>(s.calls), static_cast<unsigned long long>(s.sites), key.first.c_str(),
        name.c_str());
  }
}

}  // namespace

int reportProfile(const char *mode, const Runtime &rt, const RunOptions &o, size_t modes, nlohmann::json *json) {
  auto rows = rt.profile();
  if (!rows) return fromError(rows.error(), std::string(mode) + ": profile: ");
  size_t n = rows->size();
  *json = nlohmann::json::array();
  if (o.profile) {
    say("%s profile: %zu rows; device time of the work each call queued, from events on its stream; us\n", mode, n);
    say("%s   %12s %9s %9s %9s %8s %11s  %-12s %s\n", mode, "device total", "median", "min", "max", "calls",
        "host median", "kind", "name (site)");
  }
  for (const hj_profile_row &r : *rows) {
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
    std::string what = buffer && *r.name ? "%" : "";
    what += *r.name ? r.name : "-";
    if (*r.site) what += std::string(" (") + r.site + ")";
    if (r.timed)
      say("%s   %12.2f %9.2f %9.2f %9.2f %8llu %11.2f  %-12s %s\n", mode, r.device_us_total, r.device_us_median,
          r.device_us_min, r.device_us_max, static_cast<unsigned long long>(r.calls), r.host_us_median, r.kind,
          what.c_str());
    else
      say("%s   %12s %9s %9s %9s %8llu %11.2f  %-12s %s\n", mode, "-", "-", "-", "-",
          static_cast<unsigned long long>(r.calls), r.host_us_median, r.kind, what.c_str());
  }
  if (o.profile) printByName(mode, *rows);
  if (!o.trace.empty()) {
    std::string path = tracePath(o, mode, modes);
    if (auto ok = rt.writeTrace(path); !ok) return fromError(ok.error(), std::string(mode) + ": ");
    say("%s: trace written to %s\n", mode, path.c_str());
  }
  return kOk;
}

}  // namespace hostjit::cli
