// plan_picture.cpp - `hostjit plan FILE --picture OUT.svg`: one graph-mode
// call on the host backend, then its memory plan drawn as an SVG: each
// buffer a bar from its allocation to its free (x) at its place in the
// plan's block (y), its slot outlined, the zeroed part shaded, the outputs
// above the block, and the peak of live bytes marked.
#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "cli.h"
#include "hostjit/exec/evaluator.h"
#include "hostjit/exec/host_data.h"
#include "output.h"

namespace hostjit::cli {

namespace {

std::string escape(const std::string &s) {
  std::string out;
  for (char c : s) {
    if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else if (c == '&') out += "&amp;";
    else if (c == '"') out += "&quot;";
    else out += c;
  }
  return out;
}

std::string human(uint64_t bytes) {
  char buf[32];
  if (bytes >= (1u << 20)) std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
  else if (bytes >= 1024) std::snprintf(buf, sizeof buf, "%.1f KiB", static_cast<double>(bytes) / 1024);
  else std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(bytes));
  return buf;
}

// A slot boundary, precise enough that neighbours differ.
std::string offsetText(double bytes) {
  char buf[32];
  if (bytes < 1024) std::snprintf(buf, sizeof buf, "%.0f B", bytes);
  else if (bytes < 16.0 * (1 << 20)) std::snprintf(buf, sizeof buf, "%.1f KiB", bytes / 1024);
  else std::snprintf(buf, sizeof buf, "%.2f MiB", bytes / (1 << 20));
  return buf;
}

const char *colour(const hj_plan_buffer &b, size_t i) {
  static const char *general[] = {"#4c72b0", "#55a868", "#8172b3", "#64b5cd", "#937860", "#8c8c8c"};
  static const char *zeroed[] = {"#dd8452", "#c44e52", "#ccb974"};
  if (b.zeroed) return zeroed[i % 3];
  if (b.output) return "#da8bc3";
  return general[i % 6];
}

}  // namespace

int cmdPlanPicture(const RunOptions &o, const std::string &svg) {
  Program p;
  if (int rc = loadProgram(o.file, &p, nullptr, nullptr, true)) return rc;
  auto plan = makePlan(p);
  if (!plan) return fromError(plan.error());
  auto scalars = parseScalars(*plan, o.scalars);
  if (!scalars) return fromError(scalars.error());
  RunOptions host = o;  // the picture is of a host-backend call
  host.backend = HJ_BACKEND_HOST;
  auto rt = makeRuntime(host);
  if (!rt) return fromError(rt.error());
  auto inputs = InputSet::random(*rt, *plan, o.shapes, o.seed);
  if (!inputs) return fromError(inputs.error());
  auto ev = Evaluator::create(p, *rt);
  if (!ev) return fromError(ev.error());
  ev->setGraphMode(true);
  auto out = ev->run(inputs->span(), *scalars);
  if (!out) return fromError(out.error(), "plan --picture: ");
  hj_context *ctx = (*rt)->context();
  uint64_t n = 0, block = 0, zeroedAt = 0;
  if (hj_graph_plan_size(ctx, &n, &block, &zeroedAt) != HJ_OK)
    return userError(std::string("plan --picture: no memory plan to draw: ") + hj_graph_reason(ctx));
  std::vector<hj_plan_buffer> bufs(n);
  uint64_t events = 1;
  for (uint64_t i = 0; i < n; ++i) {
    if (int32_t st = hj_graph_plan_get(ctx, i, &bufs[i])) return fromError(runtimeError(st));
    events = std::max(events, bufs[i].first + 1);
    if (bufs[i].last != UINT64_MAX) events = std::max(events, bufs[i].last + 1);
  }
  // Outputs are stacked above the block; the live bytes are swept over the events.
  std::vector<uint64_t> outputAt(n, 0);
  uint64_t top = block;
  for (uint64_t i = 0; i < n; ++i)
    if (bufs[i].output) {
      outputAt[i] = top;
      top += std::max<uint64_t>(bufs[i].bytes, 1);
    }
  std::vector<int64_t> delta(events + 1, 0);
  for (const hj_plan_buffer &b : bufs) {
    delta[b.first] += static_cast<int64_t>(b.bytes);
    delta[b.last == UINT64_MAX ? events : b.last] -= static_cast<int64_t>(b.bytes);
  }
  int64_t live = 0, peak = 0;
  uint64_t peakAt = 0;
  for (uint64_t t = 0; t < events; ++t) {
    live += delta[t];
    if (live > peak) peak = live, peakAt = t;
  }

  // The y axis gives each band between two slot boundaries the same
  // height, whatever its bytes: a 4-byte semaphore shows beside a 4 MiB
  // workspace, and buffers that share a slot share a band.
  std::vector<double> bounds = {0, static_cast<double>(block), static_cast<double>(top)};
  for (uint64_t i = 0; i < n; ++i) {
    double base = static_cast<double>(bufs[i].output ? outputAt[i] : bufs[i].offset);
    bounds.push_back(base);
    bounds.push_back(base + static_cast<double>(bufs[i].output ? std::max<uint64_t>(bufs[i].bytes, 1) : bufs[i].capacity));
  }
  std::sort(bounds.begin(), bounds.end());
  bounds.erase(std::unique(bounds.begin(), bounds.end()), bounds.end());
  const double W = 960, left = 90, right = 30, upper = 60, lower = 60;
  const double band = std::clamp(360.0 / static_cast<double>(std::max<size_t>(bounds.size() - 1, 1)), 14.0, 60.0);
  const double ph = band * static_cast<double>(std::max<size_t>(bounds.size() - 1, 1)), pw = W - left - right;
  const double H = upper + ph + lower;
  auto X = [&](double e) { return left + pw * e / static_cast<double>(events); };
  auto Y = [&](double bytes) {
    size_t i = static_cast<size_t>(std::upper_bound(bounds.begin(), bounds.end(), bytes) - bounds.begin());
    i = std::clamp<size_t>(i, 1, bounds.size() - 1) - 1;
    double span = i + 1 < bounds.size() ? bounds[i + 1] - bounds[i] : 1;
    double frac = span > 0 ? std::min((bytes - bounds[i]) / span, 1.0) : 0;
    return upper + ph - band * (static_cast<double>(i) + frac);
  };
  std::FILE *f = std::fopen(svg.c_str(), "w");
  if (!f) return userError("plan --picture: cannot write '" + svg + "'");
  std::fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" font-family=\"sans-serif\" "
               "font-size=\"11\">\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n", W, H);
  std::fprintf(f, "<text x=\"%.0f\" y=\"22\" font-size=\"14\">%s: the memory plan of one graph-mode call</text>\n",
               left, escape(o.file).c_str());
  std::fprintf(f, "<text x=\"%.0f\" y=\"40\" fill=\"#555\">block %s (zeroed part %s), peak of live bytes %s (outputs included), "
               "%llu buffers; x: the call's allocations and frees in order</text>\n",
               left, human(block).c_str(), human(block - zeroedAt).c_str(), human(static_cast<uint64_t>(peak)).c_str(),
               static_cast<unsigned long long>(n));
  if (block > zeroedAt)
    std::fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#fff3d6\"/>\n", left,
                 Y(static_cast<double>(block)), pw, Y(static_cast<double>(zeroedAt)) - Y(static_cast<double>(block)));
  std::fprintf(f, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#333\"/>\n", left, left + pw,
               Y(static_cast<double>(block)), Y(static_cast<double>(block)));
  if (top > block)
    std::fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" fill=\"#a0507a\">outputs (allocated per call, not in the block)</text>\n",
                 left + 4, Y(static_cast<double>(top)) + 12);
  for (uint64_t i = 0; i < n; ++i) {
    const hj_plan_buffer &b = bufs[i];
    double x0 = X(static_cast<double>(b.first));
    double x1 = X(static_cast<double>(b.last == UINT64_MAX ? events : b.last));
    double base = static_cast<double>(b.output ? outputAt[i] : b.offset);
    double y0 = Y(base + static_cast<double>(b.bytes)), y1 = Y(base);
    double h = std::max(y1 - y0, 2.0);
    if (!b.output && b.capacity > b.bytes)
      std::fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" stroke=\"#999\" "
                   "stroke-dasharray=\"3,2\"/>\n", x0, Y(base + static_cast<double>(b.capacity)),
                   std::max(x1 - x0, 2.0), Y(base) - Y(base + static_cast<double>(b.capacity)));
    std::fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\" fill-opacity=\"0.85\">"
                 "<title>%%%s: %s%s%s, at %llu, slot %s, alloc %llu, free %s</title></rect>\n",
                 x0, y1 - h, std::max(x1 - x0, 2.0), h, colour(b, i), escape(b.name).c_str(), human(b.bytes).c_str(),
                 b.output ? ", output" : "", b.zeroed ? ", zeroed (resets_to_zero)" : "",
                 static_cast<unsigned long long>(b.offset), human(b.capacity).c_str(),
                 static_cast<unsigned long long>(b.first),
                 b.last == UINT64_MAX ? "after the call" : std::to_string(b.last).c_str());
    if (x1 - x0 > 60 && h > 12)
      std::fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" fill=\"white\">%%%s %s</text>\n", x0 + 4, y1 - h / 2 + 4,
                   escape(b.name).c_str(), human(b.bytes).c_str());
  }
  // The peak: where the most bytes are live at once (outputs included).
  std::fprintf(f, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#c44e52\" stroke-dasharray=\"6,3\"/>\n",
               X(static_cast<double>(peakAt) + 0.5), X(static_cast<double>(peakAt) + 0.5), upper - 6, upper + ph);
  std::fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" fill=\"#c44e52\">peak: %s live</text>\n",
               X(static_cast<double>(peakAt) + 0.5) + 4, upper - 8, human(static_cast<uint64_t>(peak)).c_str());
  std::fprintf(f, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#333\"/>\n", left, left + pw,
               upper + ph, upper + ph);
  double lastLabel = 1e9;
  for (double b : bounds) {
    if (lastLabel - Y(b) < 12) continue;
    lastLabel = Y(b);
    std::fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" fill=\"#555\">%s</text>\n", left - 4,
                 Y(b) + 4, offsetText(b).c_str());
  }
  for (int k = 0; k <= 4; ++k) {
    double e = static_cast<double>(events) * k / 4;
    std::fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" fill=\"#555\">%.0f</text>\n", X(e),
                 upper + ph + 16, e);
  }
  std::fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" fill=\"#555\">allocations and frees of the "
               "call, in order; y: offset in the block, each band between slot boundaries drawn alike (zeroed part shaded; dashed: a slot)</text>\n</svg>\n",
               left + pw / 2, H - 14);
  bool bad = std::ferror(f) != 0;
  if (std::fclose(f) != 0 || bad) return userError("plan --picture: writing '" + svg + "' failed");
  say("plan --picture: %s: %llu buffers, block %llu bytes, peak of live bytes %lld\n", svg.c_str(),
      static_cast<unsigned long long>(n), static_cast<unsigned long long>(block), static_cast<long long>(peak));
  return kOk;
}

}  // namespace hostjit::cli
