// helpers.h - shared helpers of the unit tests: parsing, runtimes with the
// test and example kernels, the repository's .hir files and their parity arguments.
#pragma once

#include <catch2/catch.hpp>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "hostjit/exec/evaluator.h"
#include "hostjit/exec/host_data.h"
#include "hostjit/jit.h"
#include "hostjit/text/text.h"
#include "hostjit/verify/verifier.h"

namespace hostjit::test {

inline Program parseOk(const std::string &text, const std::string &name = "test.hir") {
  Diagnostics d;
  Program p = parse(text, name, d);
  INFO(d.format(name, p.source));
  REQUIRE(d.empty());
  return p;
}

inline std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Every .hir file of the repository (examples, test programs, lit tests).
inline std::vector<std::string> allHirFiles() {
  std::vector<std::string> files;
  for (const char *dir : {"examples", "test/programs", "test/lit"})
    for (const auto &e : std::filesystem::recursive_directory_iterator(std::string(HOSTJIT_SOURCE_DIR) + "/" + dir))
      if (e.path().extension() == ".hir" && e.path().parent_path().filename() != "malformed")  // lit's hostile corpus
        files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

inline std::shared_ptr<Runtime> makeRuntime(hj_options o) {
  auto rt = Runtime::create(o);
  REQUIRE(rt);
  REQUIRE(hj_load_host_library((*rt)->context(), HOSTJIT_TEST_KERNELS) == HJ_OK);
  REQUIRE(hj_load_host_library((*rt)->context(), HOSTJIT_EXAMPLE_KERNELS) == HJ_OK);
  REQUIRE(hj_load_custom_library((*rt)->context(), HOSTJIT_CUSTOM_CALLS) == HJ_OK);
  return *rt;
}

// Host-backend options with every debug mode off whatever the environment
// says, and an optional memory limit.
inline hj_options testOptions(uint64_t memoryLimit = 0) {
  hj_options o;
  hj_options_init(&o);
  o.memory_limit = memoryLimit;
  o.check_zeroed = 0;
  o.fill_nan = 0;
  o.reuse_zeroed_memory = 0;
  return o;
}

inline std::shared_ptr<Runtime> makeRuntime() { return makeRuntime(testOptions()); }

// Sets an environment variable for its scope (runtimes made meanwhile read
// it), then puts back what was there.
class ScopedEnv {
 public:
  ScopedEnv(const char *name, const char *value) : name_(name) {
    if (const char *old = std::getenv(name)) {
      had_ = true;
      old_ = old;
    }
    ::setenv(name, value, 1);
  }
  ~ScopedEnv() {
    if (had_) ::setenv(name_.c_str(), old_.c_str(), 1);
    else ::unsetenv(name_.c_str());
  }
  ScopedEnv(const ScopedEnv &) = delete;
  ScopedEnv &operator=(const ScopedEnv &) = delete;

 private:
  std::string name_, old_;
  bool had_ = false;
};

// The `// parity: --input x=f32[..] --scalar k=3` lines of a program.
struct ParityArgs {
  std::map<std::string, std::vector<int64_t>> shapes;
  std::map<std::string, std::string> scalars;
};

inline std::vector<ParityArgs> parityArgs(const std::string &text) {
  std::vector<ParityArgs> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    auto at = line.find("// parity:");
    if (at == std::string::npos) continue;
    std::istringstream words(line.substr(at + 10));
    ParityArgs a;
    std::string flag, value;
    while (words >> flag >> value) {
      auto eq = value.find('=');
      REQUIRE(eq != std::string::npos);
      if (flag == "--input") {
        DType d;
        std::vector<int64_t> dims;
        std::string err;
        REQUIRE(parseShapeSpec(value.substr(eq + 1), &d, &dims, &err));
        a.shapes[value.substr(0, eq)] = dims;
      } else {
        a.scalars[value.substr(0, eq)] = value.substr(eq + 1);
      }
    }
    out.push_back(a);
  }
  return out;
}

// A program of the repository with `// parity:` arguments, parsed.
struct Subject {
  std::string file;
  Program program;
  std::vector<ParityArgs> args;
};

// Every .hir file of the repository that has parity arguments.
inline std::vector<Subject> subjects() {
  std::vector<Subject> out;
  for (const std::string &file : allHirFiles()) {
    std::string text = readFile(file);
    auto args = parityArgs(text);
    if (args.empty()) continue;
    out.push_back({file, parseOk(text, file), std::move(args)});
  }
  return out;
}

inline std::vector<ScalarArg> scalarArgs(const Plan &plan, const std::map<std::string, std::string> &given) {
  std::vector<ScalarArg> out;
  for (const PlanScalar &s : plan.scalars) {
    const std::string &v = given.at(s.name);
    switch (s.dtype) {
      case DType::f32: out.push_back(ScalarArg::f32(std::stof(v))); break;
      case DType::f64: out.push_back(ScalarArg::f64(std::stod(v))); break;
      case DType::i32: out.push_back(ScalarArg::i32(std::stoi(v))); break;
      case DType::Bool: out.push_back(ScalarArg::boolean(v == "true" || v == "1")); break;
      default: out.push_back(ScalarArg::i64(std::stoll(v))); break;
    }
  }
  return out;
}

// The one Jit of the test process (a second Jit::create fails by design);
// torn down explicitly when the test run ends (main.cpp), never by a
// static destructor.
inline std::unique_ptr<Jit> &sharedJitSlot() {
  static std::unique_ptr<Jit> jit;
  return jit;
}
inline Jit &sharedJit() {
  auto &slot = sharedJitSlot();
  if (!slot) {
    auto j = Jit::create();
    REQUIRE(j);
    slot = std::move(*j);
  }
  return *slot;
}

inline CompileOptions noCache(OptLevel opt = OptLevel::O2) {
  CompileOptions o;
  o.useCache = false;
  o.tiered = false;
  o.opt = opt;
  return o;
}

// "line:col: message" of every verifier diagnostic of a program that parses.
inline std::vector<std::string> verifierProblems(const std::string &text, const std::string &name = "v.hir") {
  Diagnostics pd;
  Program p = parse(text, name, pd);
  INFO(pd.format(name, p.source));
  REQUIRE(pd.empty());
  std::vector<std::string> out;
  Diagnostics vd = verify(p);
  for (const Diagnostic &d : vd.list())
    out.push_back(std::to_string(d.loc.line) + ":" + std::to_string(d.loc.col) + ": " + d.message);
  return out;
}

// A tensor's elements copied to the host, as T (float or double).
template <class T>
std::vector<T> elements(const Tensor &t) {
  auto h = t.toHost();
  REQUIRE(h);
  std::vector<T> v(h->size() / sizeof(T));
  std::memcpy(v.data(), h->data(), h->size());
  return v;
}
inline std::vector<float> floats(const Tensor &t) { return elements<float>(t); }
inline std::vector<double> doubles(const Tensor &t) { return elements<double>(t); }

// A program made runnable by the evaluator or by the JIT (the shared Jit,
// no cache), behind one run() so tests treat both paths alike.
class Runner {
 public:
  // graph: run() in graph mode (docs/graph-mode.md).
  Runner(const Program &p, const std::shared_ptr<Runtime> &rt, bool jit, OptLevel opt = OptLevel::O2,
         bool graph = false) {
    if (jit) {
      CompileOptions co = noCache(opt);
      co.graph = graph;
      auto c = sharedJit().compile(p, rt, co);
      INFO((c ? "" : c.error().message));
      REQUIRE(c);
      cp_ = std::move(*c);
    } else {
      auto e = Evaluator::create(p, rt);
      INFO((e ? "" : e.error().message));
      REQUIRE(e);
      ev_.emplace(std::move(*e));
      ev_->setGraphMode(graph);
    }
  }
  Expected<std::vector<Tensor>> run(std::span<const DLTensor *const> inputs = {},
                                    std::span<const ScalarArg> scalars = {}) {
    return cp_ ? cp_->run(inputs, scalars) : ev_->run(inputs, scalars);
  }
  const Plan &plan() const { return cp_ ? cp_->plan() : ev_->plan(); }
  Executable &exe() { return cp_ ? static_cast<Executable &>(*cp_) : *ev_; }

 private:
  std::unique_ptr<CompiledProgram> cp_;
  std::optional<Evaluator> ev_;
};

}  // namespace hostjit::test
