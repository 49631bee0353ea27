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

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <dlpack/dlpack.h>

#include "hostjit/ir/ir.h"
#include "hostjit/exec/evaluator.h"
#include "hostjit/exec/executable.h"

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
  // else $XDG_CACHE_HOME/hostjit, else ~/.cache/hostjit, created with mode
  // 0700. It holds code this process runs, so it is used only when it belongs
  // to this user and no one else can write it (JitStats says why not).
  // HOSTJIT_CACHE=0 turns it off as useCache=false does.
  bool useCache = true;
  std::string cacheDir;
  // Tiered compilation. When the object is not in the cache, compile()
  // returns as soon as the program is verified and its kernels are loaded;
  // its calls run the evaluator (the same runtime calls, in the same order:
  // the parity tests hold them to it) while the native code is compiled on
  // the Jit's background thread. The first call after that code is linked
  // runs it; no caller ever waits for it. false: compile() waits for the
  // native code (and a compile error is compile()'s error).
  bool tiered = true;
  // Graph mode for run() (docs/graph-mode.md): the launches and memsets of
  // each input signature are built into a graph once and replayed.
  bool graph = false;
};

// Counters of one Jit, for tests and benchmarks.
struct JitStats {
  uint64_t compiles = 0;      // objects made by LLVM codegen
  uint64_t cacheHits = 0;     // objects read from the cache
  uint64_t cacheMisses = 0;   // no usable entry
  uint64_t cacheCorrupt = 0;  // entries found truncated or corrupt (rebuilt)
  uint64_t cacheWrites = 0;
  uint64_t cacheUntrusted = 0;  // entries ignored (and rebuilt): another user's, or writable by others
  uint64_t cacheRefused = 0;    // compiles without the cache: its directory is not private to this user
  std::string cacheProblem;     // why the directory was refused ("" when never); also said once on stderr
};

class Jit;

// A compiled program bound to a runtime; its code is removed from the JIT
// when this is destroyed. Must not outlive its Jit. run() is
// Executable::run (the Evaluator's contract).
class CompiledProgram final : public Executable {
 public:
  ~CompiledProgram() override;
  CompiledProgram(const CompiledProgram &) = delete;
  CompiledProgram &operator=(const CompiledProgram &) = delete;

  // The raw entry on any context of the same backend (see the top of this
  // file): the native code once it is linked, the evaluator until then.
  int32_t call(hj_context *ctx, const DLTensor *const *inputs, const hj_value *scalars, void **outData,
               int64_t *outDims) const override {
    if (EntryFn e = tier_->entry.load(std::memory_order_acquire)) return e(ctx, kernels_->get(), inputs, scalars, outData, outDims);
    return fallback_->call(ctx, inputs, scalars, outData, outDims);
  }
  // The native entry, or nullptr while it is being compiled.
  EntryFn entry() const { return tier_->entry.load(std::memory_order_acquire); }
  bool native() const { return entry() != nullptr; }
  // Blocks until the native code is linked; its compile error if it failed
  // (the program then keeps running on the evaluator).
  Expected<void> waitNative() const;
  // Milliseconds from compile()'s start until the native code was linked
  // (-1 while pending or after a failure).
  double nativeReadyMs() const;
  bool fromCache() const { return fromCache_; }
  // True when compile() returned before the native code was built (a cold,
  // tiered compile), however soon the background compile then linked it.
  bool tiered() const { return tiered_; }

  // What a program shares with its background compile.
  struct Tier {
    std::atomic<EntryFn> entry{nullptr};  // published after `link` is set
    std::shared_ptr<void> link;           // the program's JITDylib; removed by its deleter
    std::mutex mutex;
    std::condition_variable ready;
    bool done = false;                    // linked, or failed (error set)
    std::optional<Error> error;
    bool cancelled = false;               // the program was destroyed first
    double readyMs = -1;
  };

 private:
  friend class Jit;
  CompiledProgram(std::shared_ptr<const Plan> plan, std::shared_ptr<Runtime> rt, std::shared_ptr<KernelTable> kernels);
  // Also held as keepAlive_, so the program's JITDylib goes after the
  // kernels and runtime references.
  std::shared_ptr<Tier> tier_;
  std::shared_ptr<const Evaluator> fallback_;
  bool fromCache_ = false;
  bool tiered_ = false;
};

// The one JIT of a process: create it once, destroy it explicitly (before
// exit, after every CompiledProgram). Creating a second while one lives is
// an error. compile() is thread-safe. Tiered compiles run one at a time on
// the Jit's background thread; destroying the Jit waits for the one running.
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
