// test_robustness.cpp - mutated programs never crash the parser, verifier,
// planner, evaluator or JIT emitter: they are reported or they run.
#include <random>

#include "helpers.h"
#include "hostjit/exec/parity.h"

using namespace hostjit;
using namespace hostjit::test;

namespace {

// One random edit: delete, duplicate or replace a span, or swap two lines.
std::string mutate(const std::string &text, std::mt19937 &rng) {
  std::string s = text;
  if (s.empty()) return s;
  std::uniform_int_distribution<size_t> pos(0, s.size() - 1);
  static const char *pieces[] = {"%",  "@", ",", "(", ")", "[", "]", "{", "}", "0", "-1", "?", "9223372036854775807",
                                 "i32", "f32", "ptr<", "zero_init", "resets_to_zero", "free %x", "return", "\n",
                                 "strides[0]", "size %x, 7", "ceildiv", "1.5", "\"", "//"};
  switch (rng() % 4) {
    case 0: {
      size_t at = pos(rng);
      s.erase(at, std::min<size_t>(1 + rng() % 8, s.size() - at));
      break;
    }
    case 1: {
      size_t at = pos(rng), len = std::min<size_t>(1 + rng() % 16, s.size() - at);
      s.insert(pos(rng), s.substr(at, len));
      break;
    }
    case 2: s.insert(pos(rng), pieces[rng() % std::size(pieces)]); break;
    default: {
      std::vector<std::string> lines;
      std::istringstream in(s);
      for (std::string l; std::getline(in, l);) lines.push_back(l);
      if (lines.size() > 2) std::swap(lines[rng() % lines.size()], lines[rng() % lines.size()]);
      s.clear();
      for (const std::string &l : lines) s += l + "\n";
      break;
    }
  }
  return s;
}

}  // namespace

TEST_CASE("mutated programs are reported or run, never crash", "[robustness]") {
  std::mt19937 rng(20261129);
  std::vector<std::string> sources;
  for (const std::string &f : allHirFiles()) sources.push_back(readFile(f));
  // HOSTJIT_FILL_NAN: buffers a mutated kernel never writes hold the same
  // pattern in both runs, so outputs compare bit for bit.
  hj_options o = testOptions();
  o.fill_nan = 1;
  auto rt = makeRuntime(o);
  // Real kernels trust their arguments as GPU kernels do, and a mutated
  // launch can make them write out of bounds: every kernel does nothing here.
  hj_host_kernel_fn nothing = [](const hj_dim3 *, const hj_dim3 *, uint32_t, void **) {};
  size_t parsed = 0, verified = 0, ran = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string text = sources[rng() % sources.size()];
    int edits = 1 + static_cast<int>(rng() % 3);
    for (int e = 0; e < edits; ++e) text = mutate(text, rng);
    Diagnostics d;
    Program p = parse(text, "mutant.hir", d);
    std::string report = d.format("mutant.hir", p.source);  // formatting must not crash either
    if (!d.empty()) continue;
    ++parsed;
    CHECK(print(p).size() > 0);
    Diagnostics v = verify(p);
    report = v.format("mutant.hir", p.source);
    if (!v.empty()) continue;
    ++verified;
    auto plan = makePlan(p);
    REQUIRE(plan);
    // Run some of them: dynamic dims are 5, scalars small values of their type.
    if (i % 4 != 0) continue;
    std::map<std::string, std::vector<int64_t>> shapes;
    bool small = true;
    for (const PlanInput &in : plan->inputs) {
      std::vector<int64_t> dims;
      for (int64_t dim : in.dims) dims.push_back(dim == kDynamic ? 5 : dim), small &= dim <= 4096;
      shapes[in.name] = dims;
    }
    if (!small) continue;
    std::vector<ScalarArg> scalars;
    for (const PlanScalar &sc : plan->scalars) {
      switch (sc.dtype) {
        case DType::f32: scalars.push_back(ScalarArg::f32(0.5f)); break;
        case DType::f64: scalars.push_back(ScalarArg::f64(-1.5)); break;
        case DType::i32: scalars.push_back(ScalarArg::i32(3)); break;
        case DType::Bool: scalars.push_back(ScalarArg::boolean(true)); break;
        default: scalars.push_back(ScalarArg::i64(2)); break;
      }
    }
    for (const Kernel &k : p.kernels)
      if (k.host) REQUIRE(hj_register_host_kernel(rt->context(), k.host->c_str(), nothing) == HJ_OK);
    auto ev = Evaluator::create(p, rt);
    if (!ev) continue;  // e.g. a kernel name no backend knows
    auto inputs = InputSet::random(rt, ev->plan(), shapes, 1);
    REQUIRE(inputs);
    auto out = ev->run(inputs->span(), scalars);
    ++ran;
    CompileOptions co = noCache();
    co.opt = OptLevel::O0;
    auto cp = sharedJit().compile(p, rt, co);
    REQUIRE(cp);
    auto jout = (*cp)->run(inputs->span(), scalars);
    CHECK(bool(out) == bool(jout));
    if (!out && !jout) CHECK(out.error().message == jout.error().message);
    if (out && jout) {
      auto diff = compareOutputs(*out, *jout);
      CHECK(!diff);
      if (diff) WARN(*diff << "\n" << print(p));
    }
    if (out) out->clear();
    if (jout) jout->clear();
    CHECK(rt->stats().live_bytes == 0);
  }
  CHECK(parsed > 100);
  CHECK(verified > 20);
  INFO("parsed " << parsed << ", verified " << verified << ", ran " << ran);
}
