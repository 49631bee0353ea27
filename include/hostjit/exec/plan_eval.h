// plan_eval.h - a plan's scalar expressions evaluated for one call, and an
// expression's bytes as a kernel argument: shared by the evaluator and graph
// mode, so both compute exactly what the JIT-compiled code computes.
#pragma once

#include <cstdint>

#include <dlpack/dlpack.h>

#include "hostjit/exec/plan.h"
#include "hostjit/runtime.h"

namespace hostjit {

// A scalar register: integers (and bool) in i, f64 in f, f32 in f32 (kept
// as a float so its bits travel unchanged, as in the JIT).
union PlanReg {
  int64_t i;
  double f;
  float f32;
};

// Evaluates every expression of the plan into regs (plan.exprs.size()
// entries), then its checks (unless `checks` is false: the caller knows
// some inputs are placeholders and runs the plan with the real ones later).
// On an error (a division by zero, an overflow, a failed check) returns its
// status, with the message set through hj_fail(ctx, ...) as the
// JIT-compiled code sets it. Only the expressions outside every loop
// (Plan::exprLoop).
int32_t evaluateExprs(const Plan &plan, hj_context *ctx, const DLTensor *const *inputs, const hj_value *scalars,
                      PlanReg *regs, bool checks = true);

// The expressions loop `loop` computes on each iteration (PlanLoop::exprs),
// with `indices[l]` the current index of each plan loop l; errors as above.
int32_t evaluateLoopExprs(const Plan &plan, LoopRef loop, hj_context *ctx, const int64_t *indices, PlanReg *regs);

// The bytes a kernel receives for an expression argument of kind `param`
// (an hj_param_kind), in the low bytes of the result; the rest are zero.
uint64_t exprArgBits(const PlanReg &r, int32_t param);

}  // namespace hostjit
