// jit.cpp - hostjit::Jit: one LLJIT per process, one JITDylib per compiled
// program, the object cache and the dumps.
#include "hostjit/jit.h"

#include <atomic>
#include <chrono>
#include <deque>
#include <functional>
#include <thread>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "codegen.h"
#include "emit.h"
#include "hostjit/exec/evaluator.h"
#include "hostjit/exec/scratch.h"
#include "hostjit/text/text.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/ExecutionEngine/Orc/Core.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/Support/BLAKE3.h"
#include "llvm/Transforms/Utils/Cloning.h"
#include "object_cache.h"

namespace hostjit {

const char *optLevelName(OptLevel o) {
  switch (o) {
    case OptLevel::O0: return "O0";
    case OptLevel::Light: return "light";
    case OptLevel::O2: return "O2";
  }
  return "?";
}

bool parseOptLevel(std::string_view s, OptLevel *out) {
  if (s == "O0" || s == "0") *out = OptLevel::O0;
  else if (s == "light" || s == "O1" || s == "1") *out = OptLevel::Light;
  else if (s == "O2" || s == "2") *out = OptLevel::O2;
  else return false;
  return true;
}

namespace {

std::atomic<bool> gJitAlive{false};

// HOSTJIT_DUMP=host_ir,llvm_ir,llvm_ir_opt,asm
struct Dumps {
  bool hostIr = false, llvmIr = false, llvmIrOpt = false, asmText = false;
  static Dumps fromEnv() {
    Dumps d;
    const char *v = std::getenv("HOSTJIT_DUMP");
    if (!v) return d;
    std::string s = v;
    size_t start = 0;
    while (start <= s.size()) {
      size_t end = s.find(',', start);
      std::string w = s.substr(start, end == std::string::npos ? std::string::npos : end - start);
      if (w == "host_ir") d.hostIr = true;
      else if (w == "llvm_ir") d.llvmIr = true;
      else if (w == "llvm_ir_opt") d.llvmIrOpt = true;
      else if (w == "asm") d.asmText = true;
      else if (!w.empty()) std::fprintf(stderr, "hostjit: HOSTJIT_DUMP: unknown dump '%s' (expected host_ir, llvm_ir, llvm_ir_opt, asm)\n", w.c_str());
      if (end == std::string::npos) break;
      start = end + 1;
    }
    return d;
  }
};

void dump(const char *what, const std::string &text) {
  std::fprintf(stderr, "; ---- hostjit dump: %s ----\n%s", what, text.c_str());
  if (text.empty() || text.back() != '\n') std::fputc('\n', stderr);
}

Error llvmError(const char *what, llvm::Error e) {
  return Error{HJ_ERR_INTERNAL, std::string(what) + ": " + llvm::toString(std::move(e))};
}

// The cache key: everything the object depends on. The module is a pure
// function of the plan and the emitter, so the key hashes the plan's
// fingerprint and the build ids of the emitter, the pipelines and this file
// (each changes when its file is rebuilt) instead of printing the module
// (printing costs more than the whole rest of a warm compile).
std::string hexKey(const std::string &fingerprint, OptLevel opt, const jit::HostTarget &t) {
  llvm::BLAKE3 h;
  for (const std::string &part : {fingerprint, std::string(jit::emitterBuildId()), std::string(jit::codegenBuildId()),
                                  std::string("hostjit-jit " __DATE__ " " __TIME__), std::string(optLevelName(opt)),
                                  std::string(LLVM_VERSION_STRING), t.triple, t.cpu, t.features}) {
    h.update(llvm::StringRef(part));
    h.update(llvm::StringRef("\0", 1));
  }
  auto d = h.final();
  static const char *hex = "0123456789abcdef";
  std::string s;
  for (size_t i = 0; i < 20; ++i) {
    s += hex[d[i] >> 4];
    s += hex[d[i] & 15];
  }
  return s;
}

}  // namespace

struct Jit::Impl {
  // Order matters: the LLJIT goes before the target machine it shares nothing
  // with, and both before the counters.
  std::unique_ptr<llvm::orc::LLJIT> lljit;
  llvm::orc::JITDylib *runtimeDylib = nullptr;
  jit::HostTarget target;
  std::mutex mu;  // the LLJIT, `target`, the stats and the cache
  JitStats stats;
  uint64_t programs = 0;

  // The background thread of tiered compiles: one task at a time, in order.
  std::mutex queueMu;
  std::condition_variable queueCv;
  std::deque<std::function<void()>> queue;
  bool stopping = false;
  std::thread worker;
  void enqueue(std::function<void()> task);
  void stopWorker();
};

void Jit::Impl::enqueue(std::function<void()> task) {
  std::lock_guard<std::mutex> lock(queueMu);
  queue.push_back(std::move(task));
  if (!worker.joinable())
    worker = std::thread([this] {
      for (;;) {
        std::function<void()> next;
        {
          std::unique_lock<std::mutex> l(queueMu);
          queueCv.wait(l, [this] { return stopping || !queue.empty(); });
          if (queue.empty()) return;  // stopping, nothing left
          next = std::move(queue.front());
          queue.pop_front();
        }
        next();
      }
    });
  queueCv.notify_one();
}

// Runs the tasks still queued (each finds its program cancelled or not and
// finishes its tier), then joins the thread.
void Jit::Impl::stopWorker() {
  {
    std::lock_guard<std::mutex> lock(queueMu);
    stopping = true;
  }
  queueCv.notify_all();
  if (worker.joinable()) worker.join();
}

Expected<std::unique_ptr<Jit>> Jit::create() {
  bool expected = false;
  if (!gJitAlive.compare_exchange_strong(expected, true))
    return Error{HJ_ERR_INVALID_ARGUMENT, "a hostjit::Jit already exists in this process: create one and share it"};
  std::unique_ptr<Jit> j(new Jit());
  j->impl_ = std::make_unique<Impl>();
  Impl &im = *j->impl_;
  auto fail = [&](Error e) {
    j->impl_.reset();
    gJitAlive = false;
    return e;
  };
  auto target = jit::makeHostTarget();
  if (!target) return fail(target.error());
  im.target = std::move(*target);
  auto lljit = llvm::orc::LLJITBuilder().create();
  if (!lljit) return fail(llvmError("cannot create the LLJIT", lljit.takeError()));
  im.lljit = std::move(*lljit);
  auto &es = im.lljit->getExecutionSession();
  auto rd = es.createJITDylib("hostjit.runtime");
  if (!rd) return fail(llvmError("cannot create the runtime JITDylib", rd.takeError()));
  im.runtimeDylib = &*rd;
  // Every function generated code may call, bound from the one ABI list.
  llvm::orc::SymbolMap syms;
  auto flags = llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable;
#define HJ_JIT_FN(ret, name, params) \
  syms[im.lljit->mangleAndIntern(#name)] = {llvm::orc::ExecutorAddr::fromPtr(&::name), flags};
#include "hostjit/runtime_abi.def"
#undef HJ_JIT_FN
  syms[im.lljit->mangleAndIntern("memcpy")] = {llvm::orc::ExecutorAddr::fromPtr(&::memcpy), flags};
  syms[im.lljit->mangleAndIntern("memset")] = {llvm::orc::ExecutorAddr::fromPtr(&::memset), flags};
  if (auto err = im.runtimeDylib->define(llvm::orc::absoluteSymbols(std::move(syms))))
    return fail(llvmError("cannot define the runtime symbols", std::move(err)));
  return j;
}

Jit::~Jit() {
  if (impl_) {
    impl_->stopWorker();
    impl_->lljit.reset();  // explicit teardown, never a static destructor
    impl_.reset();
    gJitAlive = false;
  }
}

JitStats Jit::stats() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->stats;
}

namespace {
// HOSTJIT_TIME_COMPILE=1: one line per compile on standard error with the
// milliseconds of each phase, to see where a compile's time goes.
class PhaseTimer {
 public:
  PhaseTimer() : on_(std::getenv("HOSTJIT_TIME_COMPILE") && std::string(std::getenv("HOSTJIT_TIME_COMPILE")) == "1") {}
  void mark(const char *phase) {
    if (!on_) return;
    auto now = std::chrono::steady_clock::now();
    line_ += std::string(line_.empty() ? "" : ", ") + phase + " " +
             std::to_string(std::chrono::duration<double, std::milli>(now - last_).count()).substr(0, 6) + " ms";
    last_ = now;
  }
  void report(OptLevel opt, const char *how) const {
    if (on_) std::fprintf(stderr, "hostjit: compile (%s, %s): %s\n", optLevelName(opt), how, line_.c_str());
  }

 private:
  bool on_;
  std::string line_;
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
};

double msSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// Emits, optimises and generates the object of a plan with target `t`,
// which the caller owns for the duration (it is not thread-safe).
Expected<llvm::SmallVector<char, 0>> produceObject(const Plan &plan, OptLevel opt, jit::HostTarget &t, const Dumps &dumps,
                                                   PhaseTimer &timer) {
  llvm::LLVMContext ctx;
  bool wantCode = dumps.llvmIr || dumps.llvmIrOpt || dumps.asmText;
  ctx.setDiscardValueNames(!wantCode);  // names only serve the dumps
  auto module = jit::emitModule(plan, ctx, t.tm->createDataLayout());
  timer.mark("emit");
  if (auto ok = jit::prepareModule(*module, *t.tm); !ok) return ok.error();
  timer.mark("verify");
  if (dumps.llvmIr) dump("llvm_ir", jit::moduleText(*module));
  jit::optimize(*module, *t.tm, opt);
  timer.mark("optimize");
  if (dumps.llvmIrOpt) dump("llvm_ir_opt", jit::moduleText(*module));
  if (dumps.asmText) {
    auto clone = llvm::CloneModule(*module);
    auto text = jit::emitCode(*clone, *t.tm, opt, true);
    if (!text) return text.error();
    dump("asm", std::string(text->data(), text->size()));
  }
  auto obj = jit::emitCode(*module, *t.tm, opt, false);
  timer.mark("codegen");
  return obj;
}

// The JITDylib of one compiled program; its deleter removes the code.
struct Link {
  Jit::Impl *impl;
  llvm::orc::JITDylib *dylib;
  llvm::orc::ResourceTrackerSP tracker;
};

}  // namespace

// A cache directory that is not private: counted, kept for JitStats, and
// said once per process on stderr; the compile goes on without the cache.
// im.mu must be held.
static void noteRefusal(Jit::Impl &im, const jit::ObjectCache &cache) {
  if (cache.problem().empty()) return;
  ++im.stats.cacheRefused;
  im.stats.cacheProblem = cache.problem();
  static std::once_flag said;
  std::call_once(said, [&] {
    std::fprintf(stderr, "hostjit: warning: the object cache is not used: %s\n", cache.problem().c_str());
  });
}

// Links an object into a JITDylib of its own; im.mu must be held.
static Expected<std::pair<std::shared_ptr<void>, EntryFn>> linkObject(Jit::Impl &im,
                                                                      std::unique_ptr<llvm::MemoryBuffer> object) {
  auto jd = im.lljit->createJITDylib("hostjit.program." + std::to_string(++im.programs));
  if (!jd) return llvmError("cannot create a JITDylib", jd.takeError());
  jd->addToLinkOrder(*im.runtimeDylib);
  auto link = std::make_unique<Link>(Link{&im, &*jd, jd->createResourceTracker()});
  auto dropLink = [&](Error e) {
    llvm::consumeError(link->tracker->remove());
    llvm::consumeError(im.lljit->getExecutionSession().removeJITDylib(*link->dylib));
    return e;
  };
  if (auto err = im.lljit->addObjectFile(link->tracker, std::move(object)))
    return dropLink(llvmError("cannot add the compiled object", std::move(err)));
  auto sym = im.lljit->lookup(*link->dylib, jit::kEntryName);
  if (!sym) return dropLink(llvmError("cannot link the compiled program", sym.takeError()));
  std::shared_ptr<void> owner(link.release(), [](void *v) {
    auto *l = static_cast<Link *>(v);
    std::lock_guard<std::mutex> g(l->impl->mu);
    auto &es = l->impl->lljit->getExecutionSession();
    llvm::consumeError(l->tracker->remove());
    llvm::consumeError(es.removeJITDylib(*l->dylib));
    delete l;
  });
  return std::make_pair(std::move(owner), sym->toPtr<EntryFn>());
}

Expected<std::unique_ptr<CompiledProgram>> Jit::compile(const Program &p, std::shared_ptr<Runtime> rt,
                                                        const CompileOptions &options) {
  auto t0 = std::chrono::steady_clock::now();
  PhaseTimer timer;
  auto plan = makePlan(p);
  if (!plan) return plan.error();
  auto planPtr = std::make_shared<const Plan>(std::move(*plan));
  timer.mark("plan");
  auto kernels = KernelTable::load(rt, *planPtr);
  if (!kernels) return kernels.error();
  timer.mark("kernels");

  std::unique_ptr<CompiledProgram> cp(new CompiledProgram(planPtr, rt, *kernels));
  cp->setGraphMode(options.graph);
  auto publish = [&cp, &t0](std::pair<std::shared_ptr<void>, EntryFn> linked) {
    CompiledProgram::Tier &tier = *cp->tier_;
    tier.link = std::move(linked.first);
    tier.done = true;
    tier.readyMs = msSince(t0);
    tier.entry.store(linked.second, std::memory_order_release);
  };

  Impl &im = *impl_;
  Dumps dumps = Dumps::fromEnv();
  if (dumps.hostIr) dump("host_ir", print(p));
  bool wantCode = dumps.llvmIr || dumps.llvmIrOpt || dumps.asmText;
  std::string cacheDir = options.useCache ? jit::ObjectCache::defaultDirectory(options.cacheDir) : std::string();
  std::unique_lock<std::mutex> lock(im.mu);
  jit::ObjectCache cache(cacheDir);
  noteRefusal(im, cache);
  std::string key = hexKey(planFingerprint(*planPtr), options.opt, im.target);
  std::unique_ptr<llvm::MemoryBuffer> object;
  if (cache.enabled() && !wantCode) {
    switch (cache.get(key, &object)) {
      case jit::ObjectCache::Lookup::Hit:
        ++im.stats.cacheHits;
        cp->fromCache_ = true;
        break;
      case jit::ObjectCache::Lookup::Untrusted: ++im.stats.cacheUntrusted; ++im.stats.cacheMisses; break;
      case jit::ObjectCache::Lookup::Corrupt: ++im.stats.cacheCorrupt; [[fallthrough]];
      case jit::ObjectCache::Lookup::Miss: ++im.stats.cacheMisses; break;
    }
  }
  if (!object && options.tiered && !wantCode) {
    // The evaluator serves the calls until the background compile links.
    lock.unlock();
    cp->tiered_ = true;
    timer.report(options.opt, "tiered: the evaluator until the native code is ready");
    std::shared_ptr<CompiledProgram::Tier> tier = cp->tier_;
    OptLevel opt = options.opt;
    im.enqueue([&im, tier, planPtr, opt, key, cacheDir, t0] {
      {
        std::lock_guard<std::mutex> l(tier->mutex);
        if (tier->cancelled) {
          tier->done = true;
          tier->error = Error{HJ_ERR_INTERNAL, "the program was destroyed before its native code was compiled"};
          return;
        }
      }
      // Code generation needs no lock: this thread has its own target machine.
      static thread_local std::optional<jit::HostTarget> target;
      Expected<void> ok;
      std::pair<std::shared_ptr<void>, EntryFn> linked;
      if (!target) {
        auto t = jit::makeHostTarget();
        if (t) target = std::move(*t);
        else ok = t.error();
      }
      PhaseTimer bgTimer;
      if (ok) {
        auto obj = produceObject(*planPtr, opt, *target, Dumps{}, bgTimer);
        if (!obj) {
          ok = obj.error();
        } else {
          std::lock_guard<std::mutex> l(im.mu);
          ++im.stats.compiles;
          llvm::StringRef bytes(obj->data(), obj->size());
          jit::ObjectCache cache(cacheDir);
          noteRefusal(im, cache);
          if (cache.enabled() && cache.put(key, bytes)) ++im.stats.cacheWrites;
          auto r = linkObject(im, llvm::MemoryBuffer::getMemBufferCopy(bytes, key));
          if (r) linked = std::move(*r);
          else ok = r.error();
        }
      }
      bgTimer.mark("link");
      bgTimer.report(opt, "background");
      std::lock_guard<std::mutex> l(tier->mutex);
      tier->done = true;
      if (!ok) {
        tier->error = ok.error();
      } else if (!tier->cancelled) {
        tier->link = std::move(linked.first);
        tier->readyMs = msSince(t0);
        tier->entry.store(linked.second, std::memory_order_release);
      }
      tier->ready.notify_all();
    });
    return cp;
  }
  if (!object) {
    auto obj = produceObject(*planPtr, options.opt, im.target, dumps, timer);
    if (!obj) return obj.error();
    ++im.stats.compiles;
    llvm::StringRef bytes(obj->data(), obj->size());
    if (cache.enabled() && cache.put(key, bytes)) ++im.stats.cacheWrites;
    object = llvm::MemoryBuffer::getMemBufferCopy(bytes, key);
  }
  auto linked = linkObject(im, std::move(object));
  if (!linked) return linked.error();
  publish(std::move(*linked));
  timer.mark("link");
  timer.report(options.opt, cp->fromCache_ ? "from the cache" : "waited");
  return cp;
}

Expected<void> CompiledProgram::waitNative() const {
  std::unique_lock<std::mutex> l(tier_->mutex);
  tier_->ready.wait(l, [this] { return tier_->done; });
  if (tier_->error) return *tier_->error;
  return {};
}

double CompiledProgram::nativeReadyMs() const {
  std::lock_guard<std::mutex> l(tier_->mutex);
  return tier_->readyMs;
}

CompiledProgram::CompiledProgram(std::shared_ptr<const Plan> plan, std::shared_ptr<Runtime> rt,
                                 std::shared_ptr<KernelTable> kernels)
    : Executable(plan, rt, kernels),
      tier_(std::make_shared<Tier>()),
      fallback_(std::make_shared<const Evaluator>(Evaluator::fromPlan(plan, rt, kernels))) {
  keepAlive_ = tier_;
}

CompiledProgram::~CompiledProgram() {
  // A background compile still to come finds the program gone and links nothing.
  if (tier_) {
    std::lock_guard<std::mutex> l(tier_->mutex);
    tier_->cancelled = true;
  }
}

namespace {
Expected<std::unique_ptr<llvm::Module>> buildModule(const Program &p, llvm::LLVMContext &ctx, jit::HostTarget &t) {
  auto plan = makePlan(p);
  if (!plan) return plan.error();
  auto m = jit::emitModule(*plan, ctx, t.tm->createDataLayout());
  if (auto ok = jit::prepareModule(*m, *t.tm); !ok) return ok.error();
  return m;
}
}  // namespace

Expected<std::string> Jit::emitLLVM(const Program &p, OptLevel opt, bool optimized) {
  auto t = jit::makeHostTarget();
  if (!t) return t.error();
  llvm::LLVMContext ctx;
  auto m = buildModule(p, ctx, *t);
  if (!m) return m.error();
  if (optimized) jit::optimize(**m, *t->tm, opt);
  return jit::moduleText(**m);
}

Expected<std::string> Jit::emitAsm(const Program &p, OptLevel opt) {
  auto t = jit::makeHostTarget();
  if (!t) return t.error();
  llvm::LLVMContext ctx;
  auto m = buildModule(p, ctx, *t);
  if (!m) return m.error();
  jit::optimize(**m, *t->tm, opt);
  auto text = jit::emitCode(**m, *t->tm, opt, true);
  if (!text) return text.error();
  return std::string(text->data(), text->size());
}

}  // namespace hostjit
