// fuzz_parity.cpp - libFuzzer target: a .hir program that verifies runs
// through the evaluator and the JIT (O0, no cache); both must make the same
// runtime calls and return the same status and message.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "fuzz_common.h"
#include "hostjit/exec/evaluator.h"
#include "hostjit/exec/host_data.h"
#include "hostjit/exec/parity.h"
#include "hostjit/jit.h"
#include "hostjit/text/text.h"

using namespace hostjit;

namespace {
// The process's one Jit, kept until the fuzzer exits (never destroyed by a
// static destructor).
Jit &jit() {
  static Jit *j = Jit::create()->release();
  return *j;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 1 << 14) return 0;
  Diagnostics d;
  Program p = parse(std::string(reinterpret_cast<const char *>(data), size), "fuzz.hir", d);
  if (!d.empty()) return 0;
  auto plan = makePlan(p);
  if (!plan) return 0;
  auto shapes = fuzz::fixedShapes(*plan);
  auto scalars = fuzz::fixedScalars(*plan);
  auto inRt = fuzz::runtimeFor(p);
  if (!inRt) return 0;
  auto inputs = InputSet::random(inRt, *plan, shapes, 1);
  if (!inputs) return 0;
  std::vector<std::string> records[2];
  std::string errors[2];
  for (int k = 0; k < 2; ++k) {
    auto rt = fuzz::runtimeFor(p);
    hj_record_enable(rt->context(), 1);
    Expected<std::vector<Tensor>> out = Error{};
    std::unique_ptr<CompiledProgram> cp;
    std::optional<Evaluator> ev;
    if (k == 0) {
      auto e = Evaluator::create(p, rt);
      if (!e) return 0;
      ev.emplace(std::move(*e));
      out = ev->run(inputs->span(), scalars);
    } else {
      CompileOptions co;
      co.opt = OptLevel::O0;
      co.useCache = false;
      co.tiered = false;
      auto c = jit().compile(p, rt, co);
      if (!c) __builtin_trap();  // the evaluator took it: the JIT must too
      cp = std::move(*c);
      out = cp->run(inputs->span(), scalars);
    }
    records[k] = rt->recordLines();
    errors[k] = out ? "" : out.error().message;
  }
  if (errors[0] != errors[1] || compareRecords(records[0], records[1])) __builtin_trap();
  return 0;
}
