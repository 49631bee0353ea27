// fusion_cases.h - the example fusions as tests run them, shared by the
// unit tests (host backend) and the GPU tests: their cases (sizes, odd ones
// among them), the CPU reference checks, and the four execution paths
// behind one run().
#pragma once

#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "fusions/reference.h"
#include "hostjit/exec/evaluator.h"
#include "hostjit/fusion/fusion.h"
#include "hostjit/exec/host_data.h"
#include "hostjit/jit.h"
#include "hostjit/fusion/kernel_executor.h"
#include "hostjit/fusion/lowering.h"

namespace hostjit::test {

inline Fusion loadExampleFusion(const std::string &sourceDir, const std::string &name) {
  auto f = loadFusionJson(sourceDir + "/examples/fusions/" + name + ".json");
  INFO((f ? "" : f.error().message));
  REQUIRE(f);
  return *f;
}

struct FusionCase {
  std::map<std::string, std::vector<int64_t>> shapes;
  std::map<std::string, std::string> scalars;
};

// Each example at a few sizes, odd ones and size 1 among them.
inline std::vector<FusionCase> fusionCases(const std::string &name) {
  if (name == "alias_reduce")
    return {{{{"x", {37, 300}}}, {}}, {{{"x", {1, 1}}}, {}}, {{{"x", {5, 513}}}, {}}, {{{"x", {256, 3}}}, {}}};
  if (name == "splitk")
    return {{{{"a", {70, 300}}, {"b", {300, 45}}}, {{"splits", "4"}}},
            {{{"a", {1, 7}}, {"b", {7, 3}}}, {{"splits", "3"}}},
            {{{"a", {33, 65}}, {"b", {65, 17}}}, {{"splits", "5"}}}};
  if (name == "chain")
    return {{{{"x", {33, 16}}}, {{"alpha", "0.5"}}},
            {{{"x", {1, 16}}}, {{"alpha", "-2"}}},
            {{{"x", {1000, 16}}}, {{"alpha", "1.25"}}}};
  return {{{{"x", {7}}}, {{"k", "3"}, {"beta", "1.5"}}},
          {{{"x", {1}}}, {{"k", "1"}, {"beta", "-0.5"}}},
          {{{"x", {300}}}, {{"k", "5"}, {"beta", "0.25"}}}};
}

inline const std::vector<std::string> &exampleFusions() {
  static const std::vector<std::string> names = {"alias_reduce", "splitk", "chain", "scalars"};
  return names;
}

inline std::vector<float> floats(const std::vector<unsigned char> &bytes) {
  std::vector<float> v(bytes.size() / 4);
  std::memcpy(v.data(), bytes.data(), bytes.size());
  return v;
}

inline std::vector<float> hostOf(const Tensor &t) {
  auto h = t.toHost();
  REQUIRE(h);
  return floats(*h);
}

// Close within 1e-4 relative, with room for sums that were added in another
// order (a GPU block adds as a tree).
inline void requireClose(const std::vector<float> &got, const std::vector<float> &want, const char *what) {
  INFO(what);
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i << ": " << got[i] << " vs " << want[i]);
    REQUIRE(std::isfinite(got[i]));
    REQUIRE(std::fabs(got[i] - want[i]) <= 1e-4 * (1.0 + std::fabs(want[i])) * 64);
  }
}

// Checks an example's outputs against its CPU reference.
inline void checkFusionReference(const std::string &name, const FusionCase &c, const InputSet &in,
                                 const std::vector<Tensor> &out) {
  namespace ref = hostjit::examples::fusions;
  if (name == "alias_reduce") {
    auto x = floats(in.hostData(0));
    requireClose(hostOf(out[0]), ref::aliasReduceReference(x, c.shapes.at("x")[0], c.shapes.at("x")[1]), "y");
  } else if (name == "splitk") {
    auto a = floats(in.hostData(0)), b = floats(in.hostData(1));
    requireClose(hostOf(out[0]),
                 ref::splitkReference(a, b, c.shapes.at("a")[0], c.shapes.at("a")[1], c.shapes.at("b")[1]), "c");
  } else if (name == "chain") {
    auto r = ref::chainReference(floats(in.hostData(0)), c.shapes.at("x")[0], std::stof(c.scalars.at("alpha")));
    requireClose(hostOf(out[0]), r.t, "t");
    requireClose(hostOf(out[1]), r.y, "y");
  } else {
    auto r = ref::scalarsReference(floats(in.hostData(0)), c.shapes.at("x")[0], std::stoll(c.scalars.at("k")),
                                   std::stof(c.scalars.at("beta")));
    requireClose(hostOf(out[0]), r.z, "z");
  }
}

// A case's inputs, made once on `rt` and shared by the paths compared
// (records name input pointers): random non-zero data from `seed`.
struct FusionInputs {
  std::shared_ptr<Runtime> rt;
  std::optional<InputSet> set;
  std::vector<ScalarArg> scalars;
  FusionInputs(const Fusion &f, const FusionCase &c, std::shared_ptr<Runtime> runtime, uint64_t seed)
      : rt(std::move(runtime)) {
    auto p = lowerFusion(f);
    REQUIRE(p);
    auto plan = makePlan(*p);
    REQUIRE(plan);
    auto s = InputSet::random(rt, *plan, c.shapes, seed);
    REQUIRE(s);
    set.emplace(std::move(*s));
    for (const PlanScalar &sc : plan->scalars) {
      const std::string &v = c.scalars.at(sc.name);
      scalars.push_back(sc.dtype == DType::f32 ? ScalarArg::f32(std::stof(v)) : ScalarArg::i64(std::stoll(v)));
    }
  }
};

// The four ways to run a fusion.
enum class Path { Evaluator, Jit, Fallback, Supplied, EvaluatorGraph, JitGraph };
inline const char *pathName(Path p) {
  switch (p) {
    case Path::Evaluator: return "evaluator";
    case Path::Jit: return "jit";
    case Path::EvaluatorGraph: return "evaluator in graph mode";
    case Path::JitGraph: return "jit in graph mode";
    case Path::Fallback: return "executor (fallback)";
    case Path::Supplied: return "executor (caller-given intermediates)";
  }
  return "?";
}
inline constexpr Path kPaths[] = {Path::Evaluator, Path::Jit,           Path::Fallback,
                                  Path::Supplied,  Path::EvaluatorGraph, Path::JitGraph};

// One path on its own runtime, behind one run(); the JIT compiles without
// the object cache.
class PathRunner {
 public:
  PathRunner(const Fusion &f, Path path, std::shared_ptr<Runtime> rt, Jit &jit) : rt_(std::move(rt)) {
    bool graph = path == Path::EvaluatorGraph || path == Path::JitGraph;
    if (path == Path::Evaluator || path == Path::Jit || graph) {
      auto p = lowerFusion(f);
      INFO((p ? "" : p.error().message));
      REQUIRE(p);
      if (path == Path::Jit || path == Path::JitGraph) {
        CompileOptions co;
        co.useCache = false;
        co.tiered = false;
        co.graph = graph;
        auto c = jit.compile(*p, rt_, co);
        INFO((c ? "" : c.error().message));
        REQUIRE(c);
        cp_ = std::move(*c);
      } else {
        auto e = Evaluator::create(*p, rt_);
        INFO((e ? "" : e.error().message));
        REQUIRE(e);
        ev_.emplace(std::move(*e));
        ev_->setGraphMode(graph);
      }
    } else {
      FusionExecutor::Options opts;
      opts.supplyIntermediates = path == Path::Supplied;
      auto e = FusionExecutor::create(f, rt_, opts);
      INFO((e ? "" : e.error().message));
      REQUIRE(e);
      exec_.emplace(std::move(*e));
    }
  }
  Expected<std::vector<Tensor>> run(const InputSet &in, const std::vector<ScalarArg> &s) {
    if (cp_) return cp_->run(in.span(), s);
    if (ev_) return ev_->run(in.span(), s);
    return exec_->run(in.span(), s);
  }
  const std::shared_ptr<Runtime> &rt() const { return rt_; }

 private:
  std::shared_ptr<Runtime> rt_;
  std::unique_ptr<CompiledProgram> cp_;
  std::optional<Evaluator> ev_;
  std::optional<FusionExecutor> exec_;
};

}  // namespace hostjit::test
