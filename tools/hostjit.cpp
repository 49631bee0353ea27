// hostjit.cpp - the command line: run, check, fmt, compile and lower .hir programs and fusion JSON.
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "hostjit/exec/evaluator.h"
#include "hostjit/fusion/fusion.h"
#include "hostjit/fusion/kernel_executor.h"
#include "hostjit/fusion/lowering.h"
#include "hostjit/fusion/triton.h"
#include "hostjit/exec/host_data.h"
#include "hostjit/jit.h"
#include "hostjit/exec/parity.h"
#include "hostjit/text/text.h"
#include "hostjit/verify/verifier.h"
#include "data_files.h"
#include "output.h"
#include "ranks.h"

using namespace hostjit;

using hostjit::cli::complain;
using hostjit::cli::say;

namespace {

constexpr int kOk = 0, kUserError = 1, kInternalError = 2;

const char *kUsage = R"(usage: hostjit COMMAND [options]   (hostjit COMMAND --help for a command's options)
  run FILE.hir|FUSION.json    run a program, or a fusion lowered, on generated inputs
  check FILE.hir|FUSION.json...  parse and verify programs and fusions
  fmt FILE.hir                print a program's canonical text
  compile FILE.hir            print the LLVM IR or assembly the JIT makes of a program
  plan FILE.hir|FUSION.json   print the plan the evaluator and the JIT both run
  lower FUSION.json           lower a segmented fusion (JSON) to Host IR text
  import-triton PATH          print the declaration of a kernel Triton compiled
Exit status: 0 ok, 1 a user error (the message says what and where), 2 an internal error.
)";

// Each command's help: what it does, its options, an example.
struct Help {
  const char *command, *text;
};
const Help kHelp[] = {
    {"run", R"(usage: hostjit run FILE.hir|FUSION.json [options]
Runs a program (a .hir file, or a fusion .json lowered to Host IR) on random
non-zero inputs (or data from .npy files) and prints each output's shape, sum
and first values.

  --input NAME=DTYPE[D0,D1,...]  shape of a tensor input (needed for dynamic dims; dtype must match)
  --input NAME=@FILE.npy         a tensor input's data from a NumPy .npy file (dtype and shape from
                                 its header, checked against the program's signature)
  --save-inputs DIR              write each tensor input (generated or read) as DIR/NAME.npy
  --save-outputs DIR             write each output of the first call as DIR/NAME.npy (NAME: the
                                 returned value's name); with several modes, DIR/MODE/NAME.npy
  --scalar NAME=VALUE            value of a scalar input
  --seed N                       seed of the random inputs (default 1)
  --backend host|cuda|auto       (default host; auto: CUDA when a driver and device exist)
  --mode eval|jit|both|executor|all
                                 (default jit) eval: the evaluator; jit: the compiled function;
                                 executor (fusions only): segment by segment through
                                 KernelExecutor, no Host IR; all: every mode
  --opt O0|light|O2              JIT optimisation level (default O2)
  --repeat N                     calls to make (default 1); with N > 1 the first is not timed
  --check-parity                 run every mode with call recording; compare records and outputs
  --stats json|text              print each mode's runtime counters
  --host-kernels LIB.so          load host kernels from a shared library (repeatable)
  --no-cache                     do not use the JIT object cache
  --no-tier                      compile the native code before the first call (by default the
                                 evaluator serves calls until the native code is ready; with
                                 --check-parity or --print-record the JIT always waits)
  --print-record                 print the runtime call record of the first call
  --graph                        graph mode for eval and jit: each input signature's launches,
                                 memsets and collectives, on all its streams, are built into a graph
                                 (CUDA graph on the GPU) once and replayed; the stats show builds,
                                 replays and node updates
  --ranks N                      run an SPMD program on N ranks joined by a communicator (per mode):
                                 threads of this process on the host backend, one process per GPU
                                 on CUDA (rank r on device r, through NCCL); rank r's inputs use
                                 seed + r; each output line starts with "rank R: "

example:
  hostjit run examples/grid_sum.hir --input x=f32[1024,256] --host-kernels build/lib/libhostjit_example_kernels.so \
      --mode both --check-parity --stats text
)"},
    {"check", R"(usage: hostjit check FILE.hir|FUSION.json...
Parses and verifies each file; prints "FILE: ok" or every problem with its
file:line:col (a fusion: lowered, then verified; problems name the JSON
path).

example:
  hostjit check examples/grid_sum.hir examples/splitk.hir
)"},
    {"fmt", R"(usage: hostjit fmt FILE.hir
Prints the program's canonical text (comments kept); fmt of fmt's output is
the same text.

example:
  hostjit fmt examples/pipeline.hir
)"},
    {"compile", R"(usage: hostjit compile FILE.hir (--emit-llvm [--optimized] | --emit-asm) [--opt O0|light|O2]
Prints the LLVM IR of the program's host function (before optimisation, or
after with --optimized), or its assembly.

  --opt O0|light|O2              optimisation level (default O2)

example:
  hostjit compile examples/grid_sum.hir --emit-llvm --optimized
)"},
    {"plan", R"(usage: hostjit plan FILE.hir|FUSION.json
Prints the plan of a program (a fusion is lowered first): the flat form the
evaluator interprets and the JIT compiles. Its sections are the signature
(inputs, scalars), the expressions in evaluation order (eN, with the value
each computes and where), the run-time checks, the steps (one runtime call
each, every field by name; sN is a buffer slot), the loops, the outputs and
the kernels (kN). The text is stable: tests compare it.

example:
  hostjit plan examples/grid_sum.hir
)"},
    {"lower", R"(usage: hostjit lower FUSION.json [-o OUT.hir]
Lowers a segmented fusion (docs/fusion-json.md) to a Host IR program and
prints it, or writes it to OUT.hir with its CUDA paths made relative to
OUT.hir's directory.

  -o OUT.hir                     write to a file instead of standard output

example:
  hostjit lower examples/fusions/chain.json -o chain.hir
)"},
    {"import-triton", R"(usage: hostjit import-triton PATH [--fusion-json]
Reads a kernel Triton compiled from its cache entry (PATH: the metadata
.json, or the directory that holds it, with the .ttir and the .cubin or
.ptx beside it) and prints its Host IR declaration with Triton's launch
ABI: its parameters, then the scratch pointers Triton appends, its image,
and, in comments, the statements that allocate the scratch and launch it.

  --fusion-json                  print the kernel's entry for a fusion's "kernels" instead

example:
  hostjit import-triton ~/.triton/cache/HASH/add_kernel.json
)"},
};

// Whether a known option belongs to a command (unknown ones are reported later).
bool optionApplies(const std::string &command, const std::string &option) {
  static const char *compileOnly[] = {"--emit-llvm", "--emit-asm", "--optimized"};
  static const char *runOnly[] = {"--input",        "--scalar",       "--seed",         "--backend",      "--mode",
                                  "--repeat",       "--check-parity", "--stats",        "--host-kernels", "--no-cache",
                                  "--no-tier",      "--print-record", "--graph",        "--ranks",        "--save-inputs",
                                  "--save-outputs"};
  auto in = [&](const auto &list) { return std::find(std::begin(list), std::end(list), option) != std::end(list); };
  if (in(compileOnly)) return command == "compile";
  if (in(runOnly)) return command == "run";
  if (option == "--opt") return command == "run" || command == "compile";
  if (option == "-o") return command == "lower";
  if (option == "--fusion-json") return command == "import-triton";
  return true;
}

const char *helpOf(const std::string &command) {
  for (const Help &h : kHelp)
    if (command == h.command) return h.text;
  return nullptr;
}

int userError(const std::string &msg) {
  complain("hostjit: error: %s\n", msg.c_str());
  return kUserError;
}

// Prints an error once, with what was being done ("jit, call 3: ") first.
int fromError(const Error &e, const std::string &context = "") {
  complain("hostjit: error: %s%s\n", context.c_str(), e.message.c_str());
  return e.status == HJ_ERR_INTERNAL ? kInternalError : kUserError;
}

bool isFusionFile(const std::string &path) { return std::filesystem::path(path).extension() == ".json"; }

// A .hir program, or a fusion JSON lowered to one (then *fusion holds it);
// kOk, or the exit status of the error it printed. `verified`: a .hir
// program must also verify, and the verifier's messages are printed as
// `check` prints them (with the source line and a caret).
int loadProgram(const std::string &path, Program *out, std::optional<Fusion> *fusion = nullptr,
                ProgramComments *comments = nullptr, bool verified = false) {
  if (isFusionFile(path)) {
    auto f = loadFusionJson(path);
    if (!f) return fromError(f.error());
    auto p = lowerFusion(*f, comments);
    if (!p) return fromError(p.error());
    *out = std::move(*p);
    if (fusion) *fusion = std::move(*f);
    return kOk;
  }
  Diagnostics d;
  *out = parseFile(path, d, comments);
  if (d.empty() && verified) d = verify(*out);
  if (!d.empty()) {
    std::fputs(d.format(path, out->source).c_str(), stderr);
    return kUserError;
  }
  return kOk;
}

struct RunOptions {
  std::string file;
  std::map<std::string, std::vector<int64_t>> shapes;
  std::map<std::string, DType> inputTypes;  // the dtype each --input gave
  std::map<std::string, std::string> inputFiles;  // --input NAME=@FILE
  std::string saveInputs, saveOutputs;
  std::map<std::string, std::string> scalars;
  uint64_t seed = 1;
  int32_t backend = HJ_BACKEND_HOST;
  bool eval = false, jit = true, executor = false;
  OptLevel opt = OptLevel::O2;
  int repeat = 1;
  bool parity = false, printRecord = false, cache = true, tiered = true, graph = false;
  std::string stats;
  std::vector<std::string> hostLibs;
  // --ranks N: this run is rank `rank` of `world`; its runtimes join the
  // communicators `ids` (one per mode).
  int ranks = 0;
  int rank = -1, world = 1;
  std::vector<hj_comm_id> ids;
  Jit *sharedJit = nullptr;  // the process's one Jit, shared by the ranks of a process
};

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
  std::vector<double> us;
  void print(const char *mode) const {
    if (us.empty()) return;
    std::vector<double> v = us;
    std::sort(v.begin(), v.end());
    say("%s: %zu calls, median %.2f us, min %.2f us per call\n", mode, v.size(), v[v.size() / 2], v.front());
  }
};

// Runs one mode: the first call (recorded if asked), then repeat-1 timed calls.
template <class Fn>
int runMode(const char *mode, Runtime &rt, const RunOptions &o, Fn &&call, std::vector<Tensor> *first,
            std::vector<std::string> *record, Timing *timing) {
  // Each call is timed as issued (kernels may still run), then the stream
  // is drained outside the timing, so a kernel that faults fails its own
  // call, and nothing more is called on a context that can no longer work.
  auto drained = [&](int call) -> int {
    if (int32_t st = hj_synchronize(rt.context()))
      return fromError(runtimeError(st), std::string(mode) + ", call " + std::to_string(call) + ": ");
    return kOk;
  };
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
  *first = std::move(*r);
  timing->us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
  for (int i = 1; i < o.repeat; ++i) {
    auto a = std::chrono::steady_clock::now();
    auto rr = call();
    auto b = std::chrono::steady_clock::now();
    if (!rr) return fromError(rr.error(), std::string(mode) + ", call " + std::to_string(i + 1) + ": ");
    if (int rc = drained(i + 1)) return rc;
    timing->us.push_back(std::chrono::duration<double, std::micro>(b - a).count());
  }
  if (o.repeat > 1) timing->us.erase(timing->us.begin());  // the first call warms caches
  return kOk;
}

// A runtime for one mode (0 eval, 1 jit, 2 executor); a rank's joins that
// mode's communicator, on CUDA device `rank`.
Expected<std::shared_ptr<Runtime>> makeRuntime(const RunOptions &o, int modeIndex = 0) {
  hj_options opts;
  hj_options_init(&opts);
  opts.backend = o.backend;
  if (o.rank >= 0 && o.backend == HJ_BACKEND_CUDA) opts.device = o.rank;
  auto rt = Runtime::create(opts);
  if (!rt) return rt;
  if (o.rank >= 0)
    if (int32_t st = hj_comm_init((*rt)->context(), &o.ids.at(modeIndex), o.world, o.rank)) return runtimeError(st);
  // Host kernels serve the host backend only: with CUDA (chosen or found by
  // auto) the kernels' CUDA sources are used and the libraries are not needed.
  if (hj_context_backend((*rt)->context()) == HJ_BACKEND_HOST)
    for (const std::string &lib : o.hostLibs)
      if (int32_t st = hj_load_host_library((*rt)->context(), lib.c_str())) return runtimeError(st);
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
    int rc = runMode(name, *rt, o, call, &r.out, &r.record, &t);
    if (rc) return rc;
    if (int rc = printOutputs(name, r.out)) return rc;
    t.print(name);
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
  for (ModeResult &r : results) {
    r.out.clear();
    stats[r.name] = statsJson(r.rt->stats());
  }
  if (o.stats == "json") say("%s\n", stats.dump(2).c_str());
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

// Writes the lowered program of a fusion; with `out`, CUDA paths are made
// relative to the output file's directory.
int cmdLower(const std::string &file, const std::string &out) {
  if (!isFusionFile(file)) return userError("lower takes a fusion (.json), got " + file);
  Program p;
  ProgramComments comments;
  if (int rc = loadProgram(file, &p, nullptr, &comments)) return rc;
  comments.func.leading.insert(comments.func.leading.begin(),
                                " Lowered by hostjit from " + std::filesystem::path(file).filename().string() + ".");
  if (out.empty()) {
    std::fputs(print(p, &comments).c_str(), stdout);
    return kOk;
  }
  namespace fs = std::filesystem;
  fs::path from = fs::absolute(fs::path(file)).parent_path(), to = fs::absolute(fs::path(out)).parent_path();
  for (Kernel &k : p.kernels)
    for (std::optional<std::string> *path : {&k.cuda, &k.image})
      if (*path && fs::path(**path).is_relative())
        *path = (from / **path).lexically_normal().lexically_relative(to).string();
  std::ofstream f(out, std::ios::binary | std::ios::trunc);
  f << print(p, &comments);
  f.close();
  if (!f) return userError("cannot write " + out);
  return kOk;
}

// Reads each kernel's compiled image (its path relative to `file`) and
// reports one that is missing, not an image, or without the kernel's entry,
// at the kernel's declaration. The device's architecture is checked when
// the kernel is loaded (there may be no device here).
void checkImages(const Program &p, const std::string &file, Diagnostics &d) {
  for (const Kernel &k : p.kernels) {
    if (!k.image) continue;
    std::string path = planKernel(k, file).image.value();
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      d.error(k.loc, "kernel @" + k.name + ": cannot read image '" + path + "'");
      continue;
    }
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (hj_kernel_image_check(bytes.data(), bytes.size(), k.entry ? k.entry->c_str() : nullptr) != HJ_OK)
      d.error(k.loc, "kernel @" + k.name + ": image '" + path + "': " + hj_last_error());
  }
}

int cmdCheck(const std::vector<std::string> &files) {
  int rc = kOk;
  for (const std::string &f : files) {
    if (isFusionFile(f)) {  // lowered and verified, as every command reads it
      Program p;
      if (int frc = loadProgram(f, &p)) {
        rc = frc;
        continue;
      }
      Diagnostics d;
      checkImages(p, f, d);
      if (!d.empty()) {
        std::fputs(d.format(f, nullptr).c_str(), stderr);
        rc = kUserError;
        continue;
      }
      std::printf("%s: ok\n", f.c_str());
      continue;
    }
    Diagnostics d;
    Program p = parseFile(f, d);
    if (d.empty()) d = verify(p);
    if (d.empty()) checkImages(p, f, d);
    if (!d.empty()) {
      std::fputs(d.format(f, p.source).c_str(), stderr);
      std::fprintf(stderr, "%s: %zu error%s\n", f.c_str(), d.size(), d.size() == 1 ? "" : "s");
      rc = kUserError;
    } else {
      std::printf("%s: ok\n", f.c_str());
    }
  }
  return rc;
}

int cmdFmt(const std::string &file) {
  Program p;
  ProgramComments comments;
  if (int rc = loadProgram(file, &p, nullptr, &comments)) return rc;
  std::fputs(print(p, &comments).c_str(), stdout);
  return kOk;
}

int cmdPlan(const std::string &file) {
  Program p;
  if (int rc = loadProgram(file, &p, nullptr, nullptr, true)) return rc;
  auto plan = makePlan(p);
  if (!plan) return fromError(plan.error());
  std::fputs(printPlan(*plan).c_str(), stdout);
  return kOk;
}

int cmdCompile(const std::string &file, bool llvm, bool asmText, bool optimized, OptLevel opt) {
  Program p;
  if (int rc = loadProgram(file, &p, nullptr, nullptr, true)) return rc;
  auto text = asmText ? Jit::emitAsm(p, opt) : Jit::emitLLVM(p, opt, optimized);
  if (!text) return fromError(text.error());
  std::fputs(text->c_str(), stdout);
  return kOk;
}

int realMain(int argc, char **argv) {
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h")) {
    std::fputs(kUsage, argc < 2 ? stderr : stdout);
    return argc < 2 ? kUserError : kOk;
  }
  std::string cmd = argv[1];
  std::vector<std::string> args(argv + 2, argv + argc);
  if (!helpOf(cmd)) return userError("unknown command '" + cmd + "' (expected run, check, fmt, compile, plan, lower or import-triton; see hostjit --help)");
  for (const std::string &a : args)
    if (a == "--help" || a == "-h") {
      std::fputs(helpOf(cmd), stdout);
      return kOk;
    }
  std::vector<std::string> files;
  RunOptions o;
  bool emitLlvm = false, emitAsm = false, optimized = false, allModes = false, fusionJson = false;
  std::string outFile;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string &a = args[i];
    auto value = [&](std::string *out) {
      if (i + 1 >= args.size()) return false;
      *out = args[++i];
      return true;
    };
    std::string v;
    if (a.rfind("-", 0) != 0 || a == "-") {
      files.push_back(a);
    } else if (!optionApplies(cmd, a)) {
      return userError("option '" + a + "' does not apply to '" + cmd + "' (see hostjit " + cmd + " --help)");
    } else if (a == "--input") {
      if (!value(&v)) return userError("--input needs NAME=DTYPE[dims]");
      size_t eq = v.find('=');
      DType d;
      std::vector<int64_t> dims;
      std::string err;
      if (eq == std::string::npos) return userError("--input " + v + ": expected NAME=DTYPE[dims] or NAME=@FILE.npy");
      if (v.compare(eq + 1, 1, "@") == 0) {
        if (eq + 2 >= v.size()) return userError("--input " + v + ": expected a file after '@'");
        o.inputFiles[v.substr(0, eq)] = v.substr(eq + 2);
        continue;
      }
      if (!parseShapeSpec(v.substr(eq + 1), &d, &dims, &err)) return userError("--input " + v + ": " + err);
      o.shapes[v.substr(0, eq)] = dims;
      o.inputTypes[v.substr(0, eq)] = d;
    } else if (a == "--save-inputs" || a == "--save-outputs") {
      if (!value(&v) || v.empty()) return userError(a + " needs a directory");
      (a == "--save-inputs" ? o.saveInputs : o.saveOutputs) = v;
    } else if (a == "--scalar") {
      if (!value(&v) || v.find('=') == std::string::npos) return userError("--scalar needs NAME=VALUE");
      o.scalars[v.substr(0, v.find('='))] = v.substr(v.find('=') + 1);
    } else if (a == "--seed") {
      if (!value(&v)) return userError("--seed needs a number");
      char *end = nullptr;
      o.seed = std::strtoull(v.c_str(), &end, 10);
      if (v.empty() || *end) return userError("--seed " + v + ": expected a whole number");
    } else if (a == "--backend") {
      if (!value(&v)) return userError("--backend needs host, cuda or auto");
      if (v == "host") o.backend = HJ_BACKEND_HOST;
      else if (v == "cuda") o.backend = HJ_BACKEND_CUDA;
      else if (v == "auto") o.backend = HJ_BACKEND_AUTO;
      else return userError("--backend " + v + ": expected host, cuda or auto");
    } else if (a == "--mode") {
      if (!value(&v)) return userError("--mode needs eval, jit, both, executor or all");
      o.eval = v == "eval" || v == "both" || v == "all";
      o.jit = v == "jit" || v == "both" || v == "all";
      o.executor = v == "executor";
      if (!o.eval && !o.jit && !o.executor)
        return userError("--mode " + v + ": expected eval, jit, both, executor or all");
      allModes = v == "all";
    } else if (a == "--opt") {
      if (!value(&v) || !parseOptLevel(v, &o.opt)) return userError("--opt expects O0, light or O2");
    } else if (a == "--repeat") {
      char *end = nullptr;
      if (!value(&v) || std::strtol(v.c_str(), &end, 10) < 1 || *end || std::strtol(v.c_str(), nullptr, 10) > 100000000)
        return userError("--repeat needs a count from 1 to 100000000");
      o.repeat = std::atoi(v.c_str());
    } else if (a == "--check-parity") {
      o.parity = true;
    } else if (a == "--print-record") {
      o.printRecord = true;
    } else if (a == "--no-cache") {
      o.cache = false;
    } else if (a == "--no-tier") {
      o.tiered = false;
    } else if (a == "--graph") {
      o.graph = true;
    } else if (a == "--ranks") {
      char *end = nullptr;
      if (!value(&v) || std::strtol(v.c_str(), &end, 10) < 1 || *end || std::strtol(v.c_str(), nullptr, 10) > 64)
        return userError("--ranks needs a count from 1 to 64");
      o.ranks = std::atoi(v.c_str());
    } else if (a == "--stats") {
      if (!value(&v) || (v != "json" && v != "text")) return userError("--stats expects json or text");
      o.stats = v;
    } else if (a == "--host-kernels") {
      if (!value(&v)) return userError("--host-kernels needs a shared library path");
      o.hostLibs.push_back(v);
    } else if (a == "-o") {
      if (!value(&outFile)) return userError("-o needs a file name");
    } else if (a == "--fusion-json") {
      fusionJson = true;
    } else if (a == "--emit-llvm") {
      emitLlvm = true;
    } else if (a == "--emit-asm") {
      emitAsm = true;
    } else if (a == "--optimized") {
      optimized = true;
    } else {
      return userError("unknown option '" + a + "' (see hostjit " + cmd + " --help)");
    }
  }
  if (cmd == "check") {
    if (files.empty()) return userError("check needs at least one FILE.hir");
    return cmdCheck(files);
  }
  if (files.size() != 1)
    return userError(cmd + (cmd == "lower" ? " needs exactly one FUSION.json" : cmd == "import-triton" ? " needs exactly one PATH" : " needs exactly one FILE.hir"));
  if (cmd == "lower") return cmdLower(files[0], outFile);
  if (cmd == "import-triton") {
    auto k = readTritonKernel(files[0]);
    if (!k) return fromError(k.error());
    std::fputs(fusionJson ? (tritonFusionKernel(*k) + "\n").c_str() : tritonHirDeclaration(*k).c_str(), stdout);
    return kOk;
  }
  if (cmd == "run") {
    o.file = files[0];
    o.executor |= allModes && isFusionFile(o.file);
    if (cli::rankFromEnvironment(&o.rank, &o.world, &o.ids)) {  // a rank that --ranks started
      std::string out;
      cli::tOutput = &out;
      int rc = cmdRun(o);
      cli::tOutput = nullptr;
      cli::printRank(stdout, o.rank, out);
      return rc;
    }
    if (o.ranks > 0) return cmdRunRanks(o, argv);
    return cmdRun(o);
  }
  if (cmd == "fmt") return cmdFmt(files[0]);
  if (cmd == "plan") return cmdPlan(files[0]);
  if (cmd == "compile") {
    if (emitLlvm == emitAsm) return userError("compile needs one of --emit-llvm or --emit-asm");
    return cmdCompile(files[0], emitLlvm, emitAsm, optimized, o.opt);
  }
  return userError("unknown command '" + cmd + "' (expected run, check, fmt, compile, plan, lower or import-triton)");
}

}  // namespace

int main(int argc, char **argv) {
  // Line by line, so that output and errors sent to one pipe (2>&1) keep
  // the order a terminal shows.
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  try {
    return realMain(argc, argv);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "hostjit: internal error: %s\n", e.what());
    return kInternalError;
  }
}
