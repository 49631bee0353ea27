// cli.h - what the commands of the hostjit command line share: exit
// statuses, error reporting, loading a program or fusion, the options of
// `run`, and each command's entry.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "hostjit/fusion/fusion.h"
#include "hostjit/fusion/inductor.h"
#include "hostjit/jit.h"
#include "hostjit/text/text.h"

namespace hostjit::cli {

constexpr int kOk = 0, kUserError = 1, kInternalError = 2;

// Prints "hostjit: error: MSG" and returns kUserError.
int userError(const std::string &msg);
// Prints an error once, with what was being done ("jit, call 3: ") first;
// kInternalError for HJ_ERR_INTERNAL, else kUserError.
int fromError(const Error &e, const std::string &context = "");
bool isFusionFile(const std::string &path);  // a .json that is not an .inductor.json
// A fusion lowered, or an Inductor description imported (*fusion: the fusion, when one).
Expected<Program> loadJsonProgram(const std::string &path, std::optional<Fusion> *fusion);
// A .hir program, or a fusion JSON lowered to one (then *fusion holds it);
// kOk, or the exit status of the error it printed. `verified`: a .hir
// program must also verify, and the verifier's messages are printed as
// `check` prints them (with the source line and a caret).
int loadProgram(const std::string &path, Program *out, std::optional<Fusion> *fusion = nullptr,
                ProgramComments *comments = nullptr, bool verified = false);

// The options of `hostjit run` (docs/cli.md).
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
  bool profile = false;  // --profile
  std::string trace;     // --trace FILE
  std::string stats;
  std::vector<std::string> hostLibs;
  std::vector<std::string> customLibs;  // --custom-calls
  // --ranks N: this run is rank `rank` of `world`; its runtimes join the
  // communicators `ids` (one per mode).
  int ranks = 0;
  int rank = -1, world = 1;
  std::vector<hj_comm_id> ids;
  Jit *sharedJit = nullptr;  // the process's one Jit, shared by the ranks of a process
};

// A runtime for one mode of `run` (0 eval, 1 jit, 2 executor): o's backend
// and profiling, its libraries loaded; a rank's joins that mode's
// communicator, on CUDA device `rank`.
Expected<std::shared_ptr<Runtime>> makeRuntime(const RunOptions &o, int modeIndex = 0);

// The --scalar values checked against the plan's scalar inputs.
Expected<std::vector<ScalarArg>> parseScalars(const Plan &plan, const std::map<std::string, std::string> &given);

// hostjit plan FILE --picture OUT.svg (tools/plan_picture.cpp): one
// graph-mode call on the host backend with the run options' inputs, its
// memory plan drawn.
int cmdPlanPicture(const RunOptions &o, const std::string &svg);

// --profile and --trace for one mode's runtime (tools/profile_report.cpp):
// prints its table (with --profile), adds it to *json as an array of rows,
// writes its trace; modes: how many modes ran.
int reportProfile(const char *mode, const Runtime &rt, const RunOptions &o, size_t modes, nlohmann::json *json);

// The commands; each returns an exit status.
int cmdRun(const RunOptions &o);
int cmdRunRanks(RunOptions o, char **argv);
int cmdLower(const std::string &file, const std::string &out);
int cmdCheck(const std::vector<std::string> &files);
int cmdFmt(const std::string &file);
int cmdPlan(const std::string &file);
int cmdCompile(const std::string &file, bool llvm, bool asmText, bool optimized, OptLevel opt);
int cmdImportTriton(const std::string &path, bool fusionJson);
int cmdImportInductor(const std::string &path);

}  // namespace hostjit::cli
