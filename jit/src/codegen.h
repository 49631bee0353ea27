// codegen.h - target machines, the optimisation pipelines and object/asm
// emission for the JIT.
#pragma once

#include <memory>
#include <string>

#include "hostjit/ir/error.h"
#include "hostjit/jit.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/IR/Module.h"
#include "llvm/Target/TargetMachine.h"

namespace hostjit::jit {

// Initialises the native target once per process.
void initializeNativeTarget();

struct HostTarget {
  std::unique_ptr<llvm::TargetMachine> tm;
  std::string triple, cpu, features;
};
Expected<HostTarget> makeHostTarget();

// Sets the module's triple and data layout for tm, and verifies it (a
// broken module is an internal error with LLVM's message).
Expected<void> prepareModule(llvm::Module &m, llvm::TargetMachine &tm);
void optimize(llvm::Module &m, llvm::TargetMachine &tm, OptLevel opt);
// Emits an object file (asm=false) or assembly text.
Expected<llvm::SmallVector<char, 0>> emitCode(llvm::Module &m, llvm::TargetMachine &tm, OptLevel opt, bool asmText);
std::string moduleText(const llvm::Module &m);
// Identifies this build of the pipelines (changes whenever codegen.cpp is rebuilt).
const char *codegenBuildId();

}  // namespace hostjit::jit
