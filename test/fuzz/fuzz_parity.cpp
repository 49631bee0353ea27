// fuzz_parity.cpp - libFuzzer target: a .hir program that verifies runs
// through the evaluator, the JIT (O0, no cache) and the evaluator in graph
// mode; all must return the same status and message (graph mode may run out
// of memory where eager calls do not, and the other way round: its memory
// plan is laid out differently), make the same runtime calls when they
// succeed, and a graph built must replay. Float min and max must keep their
// operands in the order written (with a NaN they give the first).
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
// Traps when a float min or max was built with its operands swapped: both
// paths would then agree on the wrong NaN, so parity cannot see it.
void checkMinMaxOrder(const Program &p) {
  for (const Stmt &s : p.body) {
    const auto *op = std::get_if<ScalarOp>(&s.node);
    if (!op || (op->op != OpCode::Min && op->op != OpCode::Max) || !op->a.isValue()) continue;
    const Value &r = p.value(op->result);
    if (!r.expr.valid() || !isFloat(r.dtype)) continue;
    const Expr &e = p.exprs[r.expr];
    if (e.kind == Expr::Kind::Op && !(e.a == p.value(op->a.value).expr)) __builtin_trap();
  }
}

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
  checkMinMaxOrder(p);
  auto plan = makePlan(p);
  if (!plan || !fuzz::boundedLoops(*plan)) return 0;
  auto shapes = fuzz::fixedShapes(*plan);
  auto scalars = fuzz::fixedScalars(*plan);
  auto inRt = fuzz::runtimeFor(p);
  if (!inRt) return 0;
  auto inputs = InputSet::random(inRt, *plan, shapes, 1);
  if (!inputs) return 0;
  std::vector<std::string> records[3];
  std::string errors[3];
  int32_t status[3] = {};
  for (int k = 0; k < 3; ++k) {
    auto rt = fuzz::runtimeFor(p);
    hj_record_enable(rt->context(), 1);
    Expected<std::vector<Tensor>> out = Error{};
    std::unique_ptr<CompiledProgram> cp;
    std::optional<Evaluator> ev;
    if (k == 0 || k == 2) {
      auto e = Evaluator::create(p, rt);
      if (!e) return 0;
      ev.emplace(std::move(*e));
      ev->setGraphMode(k == 2);
      out = ev->run(inputs->span(), scalars);
      if (k == 2) records[k] = rt->recordLines();
      if (k == 2 && out) {
        // A replay that runs the program, then one that does not (when it can).
        auto again = ev->run(inputs->span(), scalars);
        hj_record_enable(rt->context(), 0);
        auto fast = ev->run(inputs->span(), scalars);
        if (!again || !fast) __builtin_trap();
      }
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
    if (k < 2) records[k] = rt->recordLines();
    errors[k] = out ? "" : out.error().message;
    status[k] = out ? HJ_OK : out.error().status;
  }
  if (errors[0] != errors[1] || compareRecords(records[0], records[1])) __builtin_trap();
  bool memory = status[0] == HJ_ERR_OUT_OF_MEMORY || status[2] == HJ_ERR_OUT_OF_MEMORY;
  if (!memory && errors[0] != errors[2]) __builtin_trap();
  // A failed trace records nothing, a failed eager call its calls so far.
  if (status[0] == HJ_OK && status[2] == HJ_OK && compareRecords(records[0], records[2])) __builtin_trap();
  return 0;
}
