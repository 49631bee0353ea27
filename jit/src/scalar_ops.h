// scalar_ops.h - LLVM IR for one scalar operation of a plan, with the
// semantics of scalar_semantics.h (the evaluator's).
#pragma once

#include <functional>
#include <span>
#include <string>

#include "hostjit/exec/plan.h"
#include "llvm/IR/IRBuilder.h"

namespace hostjit::jit {

// Branches to the function's error return when cond holds, failing the call
// with this message.
using FailIf = std::function<void(llvm::Value *cond, const std::string &message)>;

// Plan expression i, an Op, of its operands' values (opArity of them): an
// integer or a bool is an i64 (an i32 sign-extended), a float a float or a
// double. Checked operations call failIf with the evaluator's message.
llvm::Value *emitScalarOp(llvm::IRBuilder<> &b, const Plan &plan, size_t i, std::span<llvm::Value *const> operands,
                          const FailIf &failIf);

// Identifies this build of scalar_ops.cpp, for the emitter's build id.
const char *scalarOpsBuildId();

}  // namespace hostjit::jit
