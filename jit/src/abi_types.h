// abi_types.h - LLVM function types built from the runtime ABI's C++ types,
// so jit/ never writes a runtime signature by hand.
#pragma once

#include <cstdint>
#include <type_traits>

#include "hostjit/runtime.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/Module.h"

namespace hostjit::jit {

template <class T>
llvm::Type *llvmType(llvm::LLVMContext &c) {
  if constexpr (std::is_void_v<T>) return llvm::Type::getVoidTy(c);
  else if constexpr (std::is_pointer_v<T>) return llvm::PointerType::getUnqual(c);
  else if constexpr (std::is_same_v<T, float>) return llvm::Type::getFloatTy(c);
  else if constexpr (std::is_same_v<T, double>) return llvm::Type::getDoubleTy(c);
  else if constexpr (std::is_integral_v<T>) return llvm::Type::getIntNTy(c, sizeof(T) * 8);
  else static_assert(sizeof(T) == 0, "runtime ABI type without an LLVM mapping");
}

template <class R, class... A>
llvm::FunctionType *functionType(R (*)(A...), llvm::LLVMContext &c) {
  return llvm::FunctionType::get(llvmType<R>(c), {llvmType<A>(c)...}, false);
}

// The runtime functions generated code calls, declared in module M.
struct RuntimeDecls {
#define HJ_JIT_FN(ret, name, params) llvm::FunctionCallee name;
#include "hostjit/runtime_abi.def"
#undef HJ_JIT_FN
  explicit RuntimeDecls(llvm::Module &m) {
#define HJ_JIT_FN(ret, name, params) name = m.getOrInsertFunction(#name, functionType(&::name, m.getContext()));
#include "hostjit/runtime_abi.def"
#undef HJ_JIT_FN
  }
};

}  // namespace hostjit::jit
