// gpu_helpers.h - what the GPU tests share: the one Jit of the process, a
// CUDA runtime, program loading, where the source tree is, and a Runner
// (evaluator or JIT behind one run()).
#pragma once

#define CATCH_CONFIG_EXTERNAL_INTERFACES
#include <catch2/catch.hpp>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/each_path.h"
#include "hostjit/exec/evaluator.h"
#include "hostjit/jit.h"
#include "hostjit/text/text.h"

namespace hostjit::gputest {

inline std::unique_ptr<Jit> &jitSlot() {
  static std::unique_ptr<Jit> j;
  return j;
}
inline Jit &jit() {
  if (!jitSlot()) {
    auto j = Jit::create();
    REQUIRE(j);
    jitSlot() = std::move(*j);
  }
  return *jitSlot();
}
struct JitTeardown : Catch::TestEventListenerBase {
  using TestEventListenerBase::TestEventListenerBase;
  void testRunEnded(const Catch::TestRunStats &) override { jitSlot().reset(); }
};

inline std::shared_ptr<Runtime> cudaRuntime(int32_t checkZeroed = 0) {
  hj_options o;
  hj_options_init(&o);
  o.backend = HJ_BACKEND_CUDA;
  o.check_zeroed = checkZeroed;
  o.fill_nan = 0;
  o.reuse_zeroed_memory = 0;
  auto rt = Runtime::create(o);
  INFO((rt ? "" : rt.error().message));
  REQUIRE(rt);
  return *rt;
}

// A float tensor's elements, copied to the host.
inline std::vector<float> hostFloats(const Tensor &t) {
  auto h = t.toHost();
  REQUIRE(h);
  std::vector<float> v(h->size() / 4);
  std::memcpy(v.data(), h->data(), v.size() * 4);
  return v;
}

inline Program load(const std::string &file) {
  Diagnostics d;
  Program p = parseFile(file, d);
  INFO(d.format(file, p.source));
  REQUIRE(d.empty());
  return p;
}

// A program from text that must parse and check.
inline Program parseText(const std::string &text, const std::string &name = "test.hir") {
  Diagnostics d;
  Program p = parse(text, name, d);
  INFO(d.format(name, p.source));
  REQUIRE(d.empty());
  return p;
}

using testpaths::eachPath;  // common/each_path.h

// The source tree: $HOSTJIT_SOURCE_DIR when set (the tests run on another
// machine than the one that built them), else where they were built from.
inline std::string sourceDir() {
  const char *env = std::getenv("HOSTJIT_SOURCE_DIR");
  return env && *env ? env : HOSTJIT_SOURCE_DIR;
}

// The calls each thread of a threads test makes: $HOSTJIT_THREAD_CALLS when
// set to an even number of at least 2, else `fallback`.
inline int threadCalls(int fallback) {
  const char *env = std::getenv("HOSTJIT_THREAD_CALLS");
  int n = env ? std::atoi(env) : 0;
  return n >= 2 && n % 2 == 0 ? n : fallback;
}

// A program run by the evaluator or by the JIT (no cache), in graph mode or
// not, behind one run().
class Runner {
 public:
  Runner(const Program &p, const std::shared_ptr<Runtime> &rt, bool useJit, bool graph = false) {
    if (useJit) {
      CompileOptions co;
      co.useCache = false;
      co.tiered = false;
      co.graph = graph;
      auto c = jit().compile(p, rt, co);
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
  Executable &exe() { return cp_ ? static_cast<Executable &>(*cp_) : *ev_; }

 private:
  std::unique_ptr<CompiledProgram> cp_;
  std::optional<Evaluator> ev_;
};

}  // namespace hostjit::gputest
