// emit.h - Plan -> LLVM IR: one entry function (see jit.h for its contract).
#pragma once

#include <memory>

#include "hostjit/exec/plan.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"

namespace hostjit::jit {

inline constexpr const char *kEntryName = "hostjit_entry";

// Identifies this build of the emitter (changes whenever emit.cpp is
// rebuilt), so cached objects from another emitter are never used.
const char *emitterBuildId();

// Emits the module; it holds no process-specific value, so the same plan
// always gives the same text.
std::unique_ptr<llvm::Module> emitModule(const Plan &plan, llvm::LLVMContext &ctx, const llvm::DataLayout &layout);

}  // namespace hostjit::jit
