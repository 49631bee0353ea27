// jit.h - compiles a Host IR program to one native function with LLVM ORC.
//
// The compiled entry has a fixed C signature (hostjit::EntryFn):
//
//   int32_t entry(hj_context *ctx, const hj_kernel_table *kernels,
//                 const DLTensor *const *inputs, const hj_value *scalars,
//                 void **outData, int64_t *outDims);
//
// inputs: one DLTensor per tensor parameter, in declared order (strides may
// be NULL: compact row-major). scalars: one hj_value per scalar parameter,
// holding its declared type. On success outData[i] holds output i's buffer
// (owned by the caller, returned with hj_free) and outDims its sizes, then
// its explicit strides when the alloc gave them, output after output. It
// computes every scalar expression first, then makes the runtime calls of
// the program in order, checking each status; on failure it frees every
// buffer it allocated and has not freed yet, newest first, with
// hj_free_on_error, and returns the status. The evaluator does exactly the
// same (Evaluator::call), and the parity tests compare the two.
//
// The function keeps no state: several threads may call it at once, each
// with its own context. No pointer or handle of this process is baked into
// the code (kernels are table indices), so the object is cacheable.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include <dlpack/dlpack.h>

#include "hostjit/ir/ir.h"
#include "hostjit/exec/plan.h"
#include "hostjit/exec/runtime.hpp"

namespace hostjit {

using EntryFn = int32_t (*)(hj_context *ctx, const hj_kernel_table *kernels, const DLTensor *const *inputs,
                            const hj_value *scalars, void **outData, int64_t *outDims);

enum class OptLevel : uint8_t {
  O0,     // no IR passes, fast instruction selection
  Light,  // SROA, EarlyCSE, InstCombine, SimplifyCFG; codegen -O1
  O2      // the default -O2 pipeline; codegen -O2
};
const char *optLevelName(OptLevel o);
bool parseOptLevel(std::string_view s, OptLevel *out);

struct CompileOptions {
  // O2 by default: its code is the closest to a hand-written function
  // (bench/RESULTS.md); a cold compile costs ~30 ms for 30 launches but is
  // paid once per machine thanks to the object cache. O0 compiles ~10x faster.
  OptLevel opt = OptLevel::O2;
  // The persistent object cache. Directory: cacheDir, else $HOSTJIT_CACHE_DIR,
  // else $XDG_CACHE_HOME/hostjit, else ~/.cache/hostjit. HOSTJIT_CACHE=0
  // turns it off as useCache=false does.
  bool useCache = true;
  std::string cacheDir;
};

// Counters of one Jit, for tests and benchmarks.
struct JitStats {
  uint64_t compiles = 0;      // objects made by LLVM codegen
  uint64_t cacheHits = 0;     // objects read from the cache
  uint64_t cacheMisses = 0;   // no usable entry
  uint64_t cacheCorrupt = 0;  // entries found truncated or corrupt (rebuilt)
  uint64_t cacheWrites = 0;
};

class Jit;

// A compiled program bound to a runtime; its code is removed from the JIT
// when this is destroyed. Must not outlive its Jit.
class CompiledProgram {
 public:
  ~CompiledProgram();
  CompiledProgram(const CompiledProgram &) = delete;
  CompiledProgram &operator=(const CompiledProgram &) = delete;

  // Checks arguments, calls the compiled function on the bound runtime and
  // returns owning outputs (the Evaluator::run contract).
  Expected<std::vector<Tensor>> run(std::span<const DLTensor *const> inputs, std::span<const ScalarArg> scalars = {});
  // The raw entry on any context of the same backend (see the top of this file).
  int32_t call(hj_context *ctx, const DLTensor *const *inputs, const hj_value *scalars, void **outData,
               int64_t *outDims) const {
    return entry_(ctx, kernels_->get(), inputs, scalars, outData, outDims);
  }
  EntryFn entry() const { return entry_; }
  const hj_kernel_table *kernels() const { return kernels_->get(); }
  const Plan &plan() const { return *plan_; }
  bool fromCache() const { return fromCache_; }

 private:
  friend class Jit;
  CompiledProgram() = default;
  // Declared first so it is destroyed last: removing the code comes after
  // the kernels and runtime references below are dropped.
  std::shared_ptr<void> link_;  // the program's JITDylib; removed by its deleter
  EntryFn entry_ = nullptr;
  bool fromCache_ = false;
  std::shared_ptr<const Plan> plan_;
  std::shared_ptr<Runtime> rt_;
  std::shared_ptr<KernelTable> kernels_;
};

// The one JIT of a process: create it once, destroy it explicitly (before
// exit, after every CompiledProgram). Creating a second while one lives is
// an error. compile() is thread-safe.
class Jit {
 public:
  static Expected<std::unique_ptr<Jit>> create();
  ~Jit();
  Jit(const Jit &) = delete;
  Jit &operator=(const Jit &) = delete;

  // Verifies, emits, optimises (or reads the object from the cache), links,
  // and loads the program's kernels on rt.
  Expected<std::unique_ptr<CompiledProgram>> compile(const Program &p, std::shared_ptr<Runtime> rt,
                                                     const CompileOptions &options = {});
  JitStats stats() const;

  // Text of the program's LLVM module, before or after optimisation, or its
  // assembly; for `hostjit compile` and golden tests. Needs no Jit.
  static Expected<std::string> emitLLVM(const Program &p, OptLevel opt, bool optimized);
  static Expected<std::string> emitAsm(const Program &p, OptLevel opt);

  struct Impl;

 private:
  Jit() = default;
  friend class CompiledProgram;
  std::unique_ptr<Impl> impl_;
};

}  // namespace hostjit
