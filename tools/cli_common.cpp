// cli_common.cpp - error reporting and program loading for every command.
#include <cstdio>
#include <filesystem>

#include "cli.h"
#include "hostjit/fusion/lowering.h"
#include "hostjit/verify/verifier.h"
#include "output.h"

namespace hostjit::cli {

int userError(const std::string &msg) {
  complain("hostjit: error: %s\n", msg.c_str());
  return kUserError;
}

// Prints an error once, with what was being done ("jit, call 3: ") first.
int fromError(const Error &e, const std::string &context) {
  complain("hostjit: error: %s%s\n", context.c_str(), e.message.c_str());
  return e.status == HJ_ERR_INTERNAL ? kInternalError : kUserError;
}

bool isFusionFile(const std::string &path) {
  return std::filesystem::path(path).extension() == ".json" && !isInductorFile(path);
}

Expected<Program> loadJsonProgram(const std::string &path, std::optional<Fusion> *fusion) {
  if (isInductorFile(path)) {
    auto imported = loadInductor(path);
    if (!imported) return imported.error();
    return std::move(imported->program);
  }
  auto f = loadFusionJson(path);
  if (!f) return f.error();
  auto p = lowerFusion(*f);
  if (p && fusion) *fusion = std::move(*f);
  return p;
}

// A .hir program, or a fusion JSON lowered to one (then *fusion holds it);
// kOk, or the exit status of the error it printed. `verified`: a .hir
// program must also verify, and the verifier's messages are printed as
// `check` prints them (with the source line and a caret).
int loadProgram(const std::string &path, Program *out, std::optional<Fusion> *fusion, ProgramComments *comments,
                bool verified) {
  if (isInductorFile(path)) {
    auto p = loadJsonProgram(path, nullptr);
    if (!p) return fromError(p.error());
    *out = std::move(*p);
    return kOk;
  }
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

}  // namespace hostjit::cli
