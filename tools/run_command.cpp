// run_command.cpp - `hostjit run`: a program or fusion on generated or
// given inputs, in each mode on its own runtime, with parity, records,
// stats and --ranks.
#include <algorithm>
#include <cmath>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "hostjit/exec/evaluator.h"
#include "hostjit/fusion/fusion.h"
#include "hostjit/fusion/kernel_executor.h"
#include "hostjit/fusion/lowering.h"
#include "hostjit/exec/host_data.h"
#include "hostjit/jit.h"
#include "hostjit/exec/parity.h"
#include "data_files.h"
#include "output.h"
#include "ranks.h"

#include "cli.h"

namespace hostjit::cli {

Expected<std::vector<ScalarArg>> parseScalars(const Plan &plan, const std::map<std::string, std::string> &given) {
  std::vector<ScalarArg> out;
  for (const PlanScalar &s : plan.scalars) {
    auto it = given.find(s.name);
    if (it == given.end())
      return Error{HJ_ERR_INVALID_ARGUMENT, "scalar input %" + s.name + " (" + dtypeName(s.dtype) +
                                                ") needs a value: --scalar " + s.name + "=..."};
    const std::string &v = it->second;
    char *end = nullptr;
    errno = 0;
    ScalarArg a;
    switch (s.dtype) {
      case DType::f32: a = ScalarArg::f32(std::strtof(v.c_str(), &end)); break;
      case DType::f64: a = ScalarArg::f64(std::strtod(v.c_str(), &end)); break;
      case DType::i32: {
        long long x = std::strtoll(v.c_str(), &end, 10);
        if (x < INT32_MIN || x > INT32_MAX) errno = ERANGE;
        a = ScalarArg::i32(static_cast<int32_t>(x));
        break;
      }
      case DType::Bool:
        if (v != "true" && v != "false" && v != "1" && v != "0")
          return Error{HJ_ERR_INVALID_ARGUMENT, "--scalar " + s.name + ": expected true or false, got '" + v + "'"};
        a = ScalarArg::boolean(v == "true" || v == "1");
        end = const_cast<char *>(v.c_str() + v.size());
        break;
      default: a = ScalarArg::i64(std::strtoll(v.c_str(), &end, 10)); break;
    }
    if (v.empty() || (end && *end))
      return Error{HJ_ERR_INVALID_ARGUMENT, "--scalar " + s.name + ": '" + v + "' is not a valid " + dtypeName(s.dtype)};
    bool overflowed = errno == ERANGE && (s.dtype == DType::f32   ? std::isinf(a.value.f32)
                                          : s.dtype == DType::f64 ? std::isinf(a.value.f64)
                                                                  : true);
    if (overflowed)
      return Error{HJ_ERR_INVALID_ARGUMENT, "--scalar " + s.name + ": '" + v + "' is out of range for " + dtypeName(s.dtype)};
    out.push_back(a);
  }
  for (const auto &[name, value] : given) {
    bool known = false;
    for (const PlanScalar &s : plan.scalars) known |= s.name == name;
    if (!known) return Error{HJ_ERR_INVALID_ARGUMENT, "--scalar " + name + ": the program has no scalar input %" + name};
  }
  return out;
}

namespace {


// Every counter of stats.def, by name.
nlohmann::json statsJson(const hj_stats &s) {
  nlohmann::json j = nlohmann::json::object();
#define HJ_STAT(name, meaning) j[#name] = s.name;
#include "hostjit/stats.def"
#undef HJ_STAT
  return j;
}

// Prints each output; kOk, or the exit status of an output that cannot be read.
int printOutputs(const char *mode, const std::vector<Tensor> &outs) {
  for (size_t i = 0; i < outs.size(); ++i) {
    const Tensor &t = outs[i];
    auto host = t.toHost();
    std::string shape;
    for (uint32_t d = 0; d < t.rank(); ++d) shape += (d ? ", " : "") + std::to_string(t.size(d));
    say("%s output %zu: %s[%s]", mode, i, dtypeName(t.dtype()), shape.c_str());
    if (!host) {
      say(" (cannot read)\n");
      return fromError(host.error(), std::string(mode) + ": reading output " + std::to_string(i) + ": ");
    }
    size_t n = host->size() / dtypeBytes(t.dtype());
    double sum = 0;
    for (size_t k = 0; k < n; ++k) sum += elementAsDouble(t.dtype(), host->data(), k);
    say(" sum=%.9g first=[", sum);
    for (size_t k = 0; k < std::min<size_t>(n, 4); ++k)
      say("%s%.9g", k ? ", " : "", elementAsDouble(t.dtype(), host->data(), k));
    say("%s]\n", n > 4 ? ", ..." : "");
  }
  return kOk;
}

struct Timing {
  std::vector<double> us;   // issued: until the call returns
  std::vector<double> end;  // until its device work is done as well (the stream drained)
  void print(const char *mode, bool device) const {
    if (us.empty()) return;
    std::vector<double> v = us;
    std::sort(v.begin(), v.end());
    say("%s: %zu calls, median %.2f us, min %.2f us per call\n", mode, v.size(), v[v.size() / 2], v.front());
    if (!device || end.size() != us.size()) return;
    v = end;
    std::sort(v.begin(), v.end());
    say("%s: end to end (the device work done), median %.2f us, min %.2f us per call\n", mode, v[v.size() / 2],
        v.front());
  }
};

// Runs one mode: the first call (recorded if asked), then repeat-1 timed calls.
// `before` runs before each call, outside the timing (inputs a program
// writes are given their first values again).
template <class Fn, class Before>
int runMode(const char *mode, Runtime &rt, const RunOptions &o, Fn &&call, Before &&before, std::vector<Tensor> *first,
            std::vector<std::string> *record, Timing *timing) {
  // Each call is timed as issued (kernels may still run), then the stream
  // is drained outside the timing, so a kernel that faults fails its own
  // call, and nothing more is called on a context that can no longer work.
  auto drained = [&](int call) -> int {
    // Named as the call's own failure would be: the number after the first.
    if (int32_t st = hj_synchronize(rt.context()))
      return fromError(runtimeError(st), std::string(mode) + (call > 1 ? ", call " + std::to_string(call) : "") + ": ");
    return kOk;
  };
  if (int rc = before()) return rc;
  if (o.parity || o.printRecord) hj_record_enable(rt.context(), 1);
  auto t0 = std::chrono::steady_clock::now();
  auto r = call();
  auto t1 = std::chrono::steady_clock::now();
  if (o.parity || o.printRecord) {
    *record = rt.recordLines();
    hj_record_enable(rt.context(), 0);
  }
  if (!r) return fromError(r.error(), std::string(mode) + ": ");
  if (int rc = drained(1)) return rc;
  auto t2 = std::chrono::steady_clock::now();
  *first = std::move(*r);
  timing->us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
  timing->end.push_back(std::chrono::duration<double, std::micro>(t2 - t0).count());
  for (int i = 1; i < o.repeat; ++i) {
    if (int rc = before()) return rc;
    auto a = std::chrono::steady_clock::now();
    auto rr = call();
    auto b = std::chrono::steady_clock::now();
    if (!rr) return fromError(rr.error(), std::string(mode) + ", call " + std::to_string(i + 1) + ": ");
    if (int rc = drained(i + 1)) return rc;
    auto c = std::chrono::steady_clock::now();
    timing->us.push_back(std::chrono::duration<double, std::micro>(b - a).count());
    timing->end.push_back(std::chrono::duration<double, std::micro>(c - a).count());
  }
  if (o.repeat > 1) {  // the first call warms caches
    timing->us.erase(timing->us.begin());
    timing->end.erase(timing->end.begin());
  }
  return kOk;
}

}  // namespace

Expected<std::shared_ptr<Runtime>> makeRuntime(const RunOptions &o, int modeIndex) {
  hj_options opts;
  hj_options_init(&opts);
  opts.backend = o.backend;
  if (o.rank >= 0 && o.backend == HJ_BACKEND_CUDA) opts.device = o.rank;
  if (o.profile || !o.trace.empty()) opts.profile = 1;
  auto rt = Runtime::create(opts);
  if (!rt) return rt;
  if (o.rank >= 0)
    if (int32_t st = hj_comm_init((*rt)->context(), &o.ids.at(modeIndex), o.world, o.rank)) return runtimeError(st);
  // Host kernels serve the host backend only: with CUDA (chosen or found by
  // auto) the kernels' CUDA sources are used and the libraries are not needed.
  if (hj_context_backend((*rt)->context()) == HJ_BACKEND_HOST)
    for (const std::string &lib : o.hostLibs)
      if (int32_t st = hj_load_host_library((*rt)->context(), lib.c_str())) return runtimeError(st);
  for (const std::string &lib : o.customLibs)
    if (int32_t st = hj_load_custom_library((*rt)->context(), lib.c_str())) return runtimeError(st);
  return rt;
}

int cmdRun(const RunOptions &o) {
  Program p;
  std::optional<Fusion> fusion;
  if (int rc = loadProgram(o.file, &p, &fusion, nullptr, true)) return rc;
  auto plan = makePlan(p);
  if (!plan) return fromError(plan.error());
  auto scalars = parseScalars(*plan, o.scalars);
  if (!scalars) return fromError(scalars.error());
  if (o.executor && !fusion) return userError("--mode executor runs a fusion (.json); " + o.file + " is a program");
  for (const auto &[name, dtype] : o.inputTypes) {
    auto in = std::find_if(plan->inputs.begin(), plan->inputs.end(), [&](const PlanInput &i) { return i.name == name; });
    if (in == plan->inputs.end()) return userError("--input " + name + ": the program has no tensor input %" + name);
    if (in->dtype != dtype)
      return userError("--input " + name + ": %" + name + " is " + toString(TensorType{in->dtype, in->dims}) + ", not " +
                       dtypeName(dtype));
  }
  bool doEval = o.eval || o.parity, doJit = o.jit || o.parity, doExec = o.executor || (o.parity && fusion);

  auto rtEval = makeRuntime(o);
  if (!rtEval) return fromError(rtEval.error());
  say("backend: %s\n", hj_context_backend((*rtEval)->context()) == HJ_BACKEND_CUDA ? "cuda" : "host");
  for (const auto &[name, path] : o.inputFiles)
    if (o.inputTypes.count(name)) return userError("--input " + name + " is given both as a shape and as a file");
  std::map<std::string, std::vector<int64_t>> shapes = o.shapes;
  auto given = cli::loadInputFiles(*plan, o.inputFiles, &shapes);
  if (!given) return fromError(given.error());
  // Each rank its own data: seed + rank.
  auto inputs = InputSet::random(*rtEval, *plan, shapes, o.seed + static_cast<uint64_t>(std::max(o.rank, 0)), *given);
  if (!inputs) return fromError(inputs.error());
  if (!o.saveInputs.empty())
    if (auto ok = cli::saveInputs(o.saveInputs, *plan, *inputs); !ok) return fromError(ok.error());

  struct ModeResult {
    const char *name;
    std::shared_ptr<Runtime> rt;
    std::vector<Tensor> out;
    std::vector<std::string> record;
  };
  std::vector<ModeResult> results;
  nlohmann::json stats;
  // Runs one mode on its own runtime and keeps its first outputs and record.
  auto mode = [&](const char *name, std::shared_ptr<Runtime> rt, auto &&call) {
    ModeResult r{name, rt, {}, {}};
    Timing t;
    auto restore = [&]() -> int {
      auto ok = inputs->restoreWritten(*plan);
      return ok ? kOk : fromError(ok.error(), std::string(name) + ": restoring written inputs: ");
    };
    int rc = runMode(name, *rt, o, call, restore, &r.out, &r.record, &t);
    if (rc) return rc;
    if (int rc = printOutputs(name, r.out)) return rc;
    t.print(name, hj_context_backend(rt->context()) == HJ_BACKEND_CUDA);
    results.push_back(std::move(r));
    return kOk;
  };
  // The programs live until the stats are read: a graph-mode program's
  // graphs (and their memory, graph_bytes) go with it.
  std::optional<Evaluator> evaluator;
  if (doEval) {
    auto ev = Evaluator::create(p, *rtEval);
    if (!ev) return fromError(ev.error());
    evaluator.emplace(std::move(*ev));
    evaluator->setGraphMode(o.graph);
    if (int rc = mode("eval", *rtEval, [&] { return evaluator->run(inputs->span(), *scalars); })) return rc;
  }
  std::unique_ptr<Jit> ownJit;
  Jit *jit = o.sharedJit;
  std::unique_ptr<CompiledProgram> compiled;
  if (doJit) {
    auto rtJit = makeRuntime(o, 1);
    if (!rtJit) return fromError(rtJit.error());
    if (!jit) {
      auto j = Jit::create();
      if (!j) return fromError(j.error());
      ownJit = std::move(*j);
      jit = ownJit.get();
    }
    CompileOptions co;
    co.opt = o.opt;
    co.useCache = o.cache;
    // Records compare only when every call runs the native code.
    co.tiered = o.tiered && !o.parity && !o.printRecord;
    co.graph = o.graph;
    auto t0 = std::chrono::steady_clock::now();
    auto cp = jit->compile(p, *rtJit, co);
    auto t1 = std::chrono::steady_clock::now();
    if (!cp) return fromError(cp.error());
    compiled = std::move(*cp);
    say("jit: ready in %.3f ms (%s, %s)\n", std::chrono::duration<double, std::milli>(t1 - t0).count(),
                optLevelName(o.opt),
                compiled->fromCache() ? "from the object cache"
                : compiled->tiered()   ? "tiered: the evaluator serves calls until the native code is ready"
                                      : "codegen");
    int onEvaluator = 0, calls = 0;
    if (int rc = mode("jit", *rtJit, [&] {
          onEvaluator += !compiled->native(), ++calls;
          return compiled->run(inputs->span(), *scalars);
        }))
      return rc;
    if (calls > 0 && onEvaluator > 0) say("jit: %d of %d calls ran on the evaluator\n", onEvaluator, calls);
    if (auto ok = compiled->waitNative(); !ok) return fromError(ok.error(), "jit: native code: ");
    say("jit: native code ready %.3f ms after compile() began\n", compiled->nativeReadyMs());
  }
  if (doExec) {
    auto rtExec = makeRuntime(o, 2);
    if (!rtExec) return fromError(rtExec.error());
    auto fe = FusionExecutor::create(*fusion, *rtExec);
    if (!fe) return fromError(fe.error());
    if (int rc = mode("executor", *rtExec, [&] { return fe->run(inputs->span(), *scalars); })) return rc;
  }
  // Each mode's first outputs as .npy files: DIR/NAME.npy, or with several
  // modes DIR/MODE/NAME.npy; one rank of an SPMD run writes under rankR/.
  if (!o.saveOutputs.empty()) {
    std::vector<std::string> names = cli::outputNames(p);
    std::filesystem::path base(o.saveOutputs);
    if (o.rank >= 0) base /= "rank" + std::to_string(o.rank);
    for (const ModeResult &r : results)
      if (auto ok = cli::saveOutputs((results.size() > 1 ? base / r.name : base).string(), names, r.out); !ok)
        return fromError(ok.error());
  }
  // Each mode's record, labelled when there are several.
  if (o.printRecord)
    for (const ModeResult &r : results) {
      if (results.size() > 1) say("%s record:\n", r.name);
      for (const std::string &l : r.record) say("  %s\n", l.c_str());
    }
  int rc = kOk;
  for (size_t i = 1; i < results.size(); ++i) {
    const ModeResult &a = results[0], &b = results[i];
    if (auto diff = compareOutputs(a.out, b.out)) {
      complain("hostjit: outputs of %s and %s differ: %s\n", a.name, b.name, diff->c_str());
      rc = kUserError;
    } else {
      say("outputs: %s and %s are bit-identical\n", a.name, b.name);
    }
    if (o.parity) {
      if (auto diff = compareRecords(a.record, b.record, a.name, b.name)) {
        complain("hostjit: parity check failed: %s\n", diff->c_str());
        rc = kUserError;
      } else {
        say("parity: %s and %s: %zu runtime calls, records identical\n", a.name, b.name, a.record.size());
      }
    }
  }
  nlohmann::json profiles = nlohmann::json::object();
  for (ModeResult &r : results) {
    r.out.clear();
    if (o.profile || !o.trace.empty())
      if (int prc = reportProfile(r.name, *r.rt, o, results.size(), &profiles[r.name])) return prc;
    hj_stats st = r.rt->stats();
    stats[r.name] = statsJson(st);
    if (st.graph_fallbacks > 0 && *hj_graph_reason(r.rt->context()))
      say("%s: graph mode ran %llu calls eagerly: %s\n", r.name, (unsigned long long)st.graph_fallbacks,
          hj_graph_reason(r.rt->context()));
    if (o.graph && !o.stats.empty() && *hj_graph_outcome(r.rt->context()))
      say("%s: last graph-mode call: %s\n", r.name, hj_graph_outcome(r.rt->context()));
  }
  if (o.stats == "json") {
    for (auto &[m, rows] : profiles.items()) stats[m]["profile"] = rows;
    say("%s\n", stats.dump(2).c_str());
  }
  else if (o.stats == "text")
    for (auto &[m, s] : stats.items()) {
      say("%s stats:", m.c_str());
      for (auto &[k, v] : s.items()) say(" %s=%s", k.c_str(), v.dump().c_str());
      say("\n");
    }
  return rc;
}

// --ranks N: the program on N ranks, each with its own inputs (seed + rank)
// and a communicator per mode.
int cmdRunRanks(RunOptions o, char **argv) {
  if (o.backend == HJ_BACKEND_AUTO) {
    hj_options opts;
    hj_options_init(&opts);
    opts.backend = HJ_BACKEND_AUTO;
    auto rt = Runtime::create(opts);
    if (!rt) return fromError(rt.error());
    o.backend = hj_context_backend((*rt)->context());
  }
  std::unique_ptr<Jit> jit;
  if (o.backend == HJ_BACKEND_HOST && (o.jit || o.parity)) {  // threads share the process's Jit
    auto j = Jit::create();
    if (!j) return fromError(j.error());
    jit = std::move(*j);
    o.sharedJit = jit.get();
  }
  return cli::runRanks(o.ranks, o.backend, 3, argv, [&](int rank, int world, const std::vector<hj_comm_id> &ids) {
    RunOptions r = o;
    r.rank = rank;
    r.world = world;
    r.ids = ids;
    return cmdRun(r);
  });
}

}  // namespace hostjit::cli
