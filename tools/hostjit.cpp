// hostjit.cpp - the command line: usage, options, and the dispatch to each command (cli.h).
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "hostjit/fusion/fusion.h"
#include "hostjit/exec/host_data.h"
#include "hostjit/jit.h"
#include "hostjit/text/text.h"
#include "output.h"
#include "ranks.h"
#include "cli.h"

using namespace hostjit;

using hostjit::cli::complain;
using hostjit::cli::say;
using namespace hostjit::cli;

namespace {


const char *kUsage = R"(usage: hostjit COMMAND [options]   (hostjit COMMAND --help for a command's options)
  run FILE.hir|FUSION.json    run a program, or a fusion lowered, on generated inputs
  check FILE.hir|FUSION.json...  parse and verify programs and fusions
  fmt FILE.hir                print a program's canonical text
  compile FILE.hir            print the LLVM IR or assembly the JIT makes of a program
  plan FILE.hir|FUSION.json   print the plan the evaluator and the JIT both run
  lower FUSION.json           lower a segmented fusion (JSON) to Host IR text
  import-triton PATH          print the declaration of a kernel Triton compiled
  import-inductor FILE.inductor.json  print the program a recorded Inductor program imports as
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
  --repeat N                     calls to make, 1 to 100000000 (default 1); with N > 1 the first
                                 is not timed
  --check-parity                 run every mode with call recording; compare records and outputs
  --stats json|text              print each mode's runtime counters
  --host-kernels LIB.so          load host kernels from a shared library (repeatable)
  --custom-calls LIB.so          load custom call functions from a shared library, for
                                 declarations that name no library (repeatable)
  --no-cache                     do not use the JIT object cache
  --no-tier                      compile the native code before the first call (by default the
                                 evaluator serves calls until the native code is ready; with
                                 --check-parity or --print-record the JIT always waits)
  --print-record                 print the runtime call record of the first call
  --graph                        graph mode for eval and jit: each input signature's launches,
                                 memsets and collectives, on all its streams, are built into a graph
                                 (CUDA graph on the GPU) once and replayed; the stats show builds,
                                 replays and node updates
  --profile                      time every runtime call (host) and the device work it queues
                                 (CUDA events per stream; host backend: wall clock); print a
                                 table per kind, name and site, sorted by device time (in
                                 --stats json too)
  --trace FILE.json              write each mode's calls and device work as a Chrome trace
                                 (open it in ui.perfetto.dev); several modes: FILE.MODE.json
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
       hostjit plan FILE.hir|FUSION.json --picture OUT.svg [--input ...] [--scalar ...] [--seed N]
                                    [--host-kernels LIB.so] [--custom-calls LIB.so]
Prints the plan of a program (a fusion is lowered first): the flat form the
evaluator interprets and the JIT compiles. Its sections are the signature
(inputs, scalars), the expressions in evaluation order (eN, with the value
each computes and where), the run-time checks, the steps (one runtime call
each, every field by name; sN is a buffer slot), the loops, the outputs and
the kernels (kN). The text is stable: tests compare it.

With --picture, runs the program once in graph mode on the host backend
(inputs as hostjit run takes them) and draws its memory plan as an SVG:
each buffer a bar from its allocation to its free at its place in the
plan's block, its slot outlined, the zeroed part shaded, the outputs above
the block, the peak of live bytes marked.

  --picture OUT.svg              draw the memory plan into OUT.svg
  --input, --scalar, --seed      the call's inputs, as for hostjit run
  --host-kernels LIB.so          load host kernels from a shared library (repeatable)
  --custom-calls LIB.so          load custom call functions from a shared library (repeatable)

example:
  hostjit plan examples/grid_sum.hir
  hostjit plan examples/pipeline.hir --picture plan.svg --input x=f32[33,1000] --scalar alpha=0.5 \
      --host-kernels build/lib/libhostjit_example_kernels.so
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
    {"import-inductor", R"(usage: hostjit import-inductor FILE.inductor.json
Imports a program Inductor compiled, as recorded where PyTorch runs
(docs/inductor.md): its Triton kernels by the exact variant each launch
used, its extern matmuls, buffers, views and size symbols, as one Host IR
program, and prints it, after comments that say how each of the Inductor
call's outputs is seen in the program's results or inputs. run, check,
plan and compile take a .inductor.json file as they take a .hir file.

example:
  hostjit import-inductor test/lit/inputs/inductor/linear_add.inductor.json
)"},
};

// Whether a known option belongs to a command (unknown ones are reported later).
bool optionApplies(const std::string &command, const std::string &option) {
  static const char *compileOnly[] = {"--emit-llvm", "--emit-asm", "--optimized"};
  static const char *runOnly[] = {"--input",        "--scalar",       "--seed",         "--backend",      "--mode",
                                  "--repeat",       "--check-parity", "--stats",        "--host-kernels", "--no-cache",
                                  "--no-tier",      "--print-record", "--graph",        "--ranks",        "--save-inputs",
                                  "--save-outputs", "--custom-calls", "--profile",      "--trace"};
  // plan --picture runs the program once: these give it its inputs.
  static const char *planToo[] = {"--input", "--scalar", "--seed", "--host-kernels", "--custom-calls"};
  auto in = [&](const auto &list) { return std::find(std::begin(list), std::end(list), option) != std::end(list); };
  if (in(compileOnly)) return command == "compile";
  if (in(runOnly)) return command == "run" || (command == "plan" && in(planToo));
  if (option == "--picture") return command == "plan";
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

int realMain(int argc, char **argv) {
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h")) {
    std::fputs(kUsage, argc < 2 ? stderr : stdout);
    return argc < 2 ? kUserError : kOk;
  }
  std::string cmd = argv[1];
  std::vector<std::string> args(argv + 2, argv + argc);
  if (!helpOf(cmd)) return userError("unknown command '" + cmd + "' (expected run, check, fmt, compile, plan, lower, import-triton or import-inductor; see hostjit --help)");
  for (const std::string &a : args)
    if (a == "--help" || a == "-h") {
      std::fputs(helpOf(cmd), stdout);
      return kOk;
    }
  std::vector<std::string> files;
  RunOptions o;
  bool emitLlvm = false, emitAsm = false, optimized = false, allModes = false, fusionJson = false;
  std::string outFile, picture;
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
    } else if (a == "--picture") {
      if (!value(&picture) || picture.empty()) return userError("--picture needs a file name");
    } else if (a == "--profile") {
      o.profile = true;
    } else if (a == "--trace") {
      if (!value(&v) || v.empty()) return userError("--trace needs a file name");
      o.trace = v;
    } else if (a == "--ranks") {
      char *end = nullptr;
      if (!value(&v) || std::strtol(v.c_str(), &end, 10) < 1 || *end || std::strtol(v.c_str(), nullptr, 10) > 64)
        return userError("--ranks needs a count from 1 to 64");
      o.ranks = std::atoi(v.c_str());
    } else if (a == "--stats") {
      if (!value(&v) || (v != "json" && v != "text")) return userError("--stats expects json or text");
      o.stats = v;
    } else if (a == "--custom-calls") {
      if (!value(&v)) return userError("--custom-calls needs a shared library path");
      o.customLibs.push_back(v);
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
    return userError(cmd + (cmd == "lower" ? " needs exactly one FUSION.json" : cmd == "import-triton" ? " needs exactly one PATH" : cmd == "import-inductor" ? " needs exactly one FILE.inductor.json" : " needs exactly one FILE.hir"));
  if (cmd == "lower") return cmdLower(files[0], outFile);
  if (cmd == "import-triton") return cmdImportTriton(files[0], fusionJson);
  if (cmd == "import-inductor") return cmdImportInductor(files[0]);
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
  if (cmd == "plan") {
    if (picture.empty()) return cmdPlan(files[0]);
    o.file = files[0];
    return cmdPlanPicture(o, picture);
  }
  if (cmd == "compile") {
    if (emitLlvm == emitAsm) return userError("compile needs one of --emit-llvm or --emit-asm");
    return cmdCompile(files[0], emitLlvm, emitAsm, optimized, o.opt);
  }
  return userError("unknown command '" + cmd + "' (expected run, check, fmt, compile, plan, lower, import-triton or import-inductor)");
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
