// commands.cpp - the commands besides run: lower, check (with the images a
// program names), fmt, plan, compile and import-triton.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "hostjit/fusion/fusion.h"
#include "hostjit/fusion/lowering.h"
#include "hostjit/fusion/triton.h"
#include "hostjit/ir/files.h"
#include "hostjit/jit.h"
#include "hostjit/text/text.h"
#include "hostjit/verify/verifier.h"
#include "output.h"

#include "cli.h"

namespace hostjit::cli {

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
  if (auto ok = writeFileBytes(out, print(p, &comments)); !ok) return userError(ok.error().message);
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
    auto bytes = readFileBytes(path, kMaxDataFileBytes);
    if (!bytes) {
      d.error(k.loc, "kernel @" + k.name + ": cannot read image '" + path + "': " + bytes.error().message);
      continue;
    }
    if (hj_kernel_image_check(bytes->data(), bytes->size(), k.entry ? k.entry->c_str() : nullptr) != HJ_OK)
      d.error(k.loc, "kernel @" + k.name + ": image '" + path + "': " + hj_last_error());
  }
}

int cmdCheck(const std::vector<std::string> &files) {
  int rc = kOk;
  for (const std::string &f : files) {
    if (isFusionFile(f) || isInductorFile(f)) {  // lowered or imported, and verified, as every command reads it
      Expected<Program> p = loadJsonProgram(f, nullptr);
      if (!p) {
        // One problem a line, as a program's; then the count, as for one.
        const std::string &m = p.error().message;
        size_t n = 1 + static_cast<size_t>(std::count(m.begin(), m.end(), '\n'));
        rc = std::max(rc, fromError(p.error()));
        std::fprintf(stderr, "%s: %zu error%s\n", f.c_str(), n, n == 1 ? "" : "s");
        continue;
      }
      Diagnostics d;
      checkImages(*p, f, d);
      if (!d.empty()) {
        std::fputs(d.format(f, nullptr).c_str(), stderr);
        std::fprintf(stderr, "%s: %zu error%s\n", f.c_str(), d.size(), d.size() == 1 ? "" : "s");
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

int cmdImportInductor(const std::string &path) {
  auto imported = loadInductor(path);
  if (!imported) return fromError(imported.error());
  std::string text = "// Imported by hostjit from " + std::filesystem::path(path).filename().string() +
                     "; the Inductor call's outputs:\n" + describeOutputs(*imported) + print(imported->program);
  std::fputs(text.c_str(), stdout);
  return kOk;
}

int cmdImportTriton(const std::string &path, bool fusionJson) {
  auto k = readTritonKernel(path);
  if (!k) return fromError(k.error());
  std::fputs(fusionJson ? (tritonFusionKernel(*k) + "\n").c_str() : tritonHirDeclaration(*k).c_str(), stdout);
  return kOk;
}

}  // namespace hostjit::cli
