// bench_jit.cpp - compile time of the JIT (cold per optimisation level,
// tiered, warm from the object cache, one-time JIT creation) and host call
// overhead of JIT, evaluator and a hand-written function making the same
// runtime calls.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <filesystem>

#include "hostjit/exec/evaluator.h"
#include "hostjit/exec/host_data.h"
#include "hostjit/jit.h"
#include "hostjit/text/text.h"
#include "interleave.h"
#include "programs.h"

using namespace hostjit;

namespace {

// The process's one Jit; destroyed explicitly at the end of main.
std::unique_ptr<Jit> gJit;

Program program(int segments) {
  Diagnostics d;
  Program p = parse(bench::segmentedProgram(segments), "bench.hir", d);
  if (!d.empty()) std::abort();
  return p;
}

std::shared_ptr<Runtime> runtime() {
  hj_options o;
  hj_options_init(&o);
  o.check_zeroed = o.fill_nan = o.reuse_zeroed_memory = 0;
  auto rt = *Runtime::create(o);
  if (hj_load_host_library(rt->context(), HOSTJIT_EXAMPLE_KERNELS) != HJ_OK) std::abort();
  return rt;
}

void BM_JitCreate(benchmark::State &state) {
  gJit.reset();
  for (auto _ : state) {
    auto j = Jit::create();
    if (!j) state.SkipWithError(j.error().message.c_str());
    benchmark::DoNotOptimize(j);
  }
  gJit = std::move(*Jit::create());
}

void BM_CompileCold(benchmark::State &state) {
  Program p = program(static_cast<int>(state.range(0)));
  auto rt = runtime();
  CompileOptions co;
  co.opt = static_cast<OptLevel>(state.range(1));
  co.useCache = false;
  co.tiered = false;
  for (auto _ : state) {
    auto cp = gJit->compile(p, rt, co);
    if (!cp) state.SkipWithError(cp.error().message.c_str());
  }
  state.SetLabel(std::string("opt=") + optLevelName(co.opt));
}

void BM_CompileWarm(benchmark::State &state) {
  Program p = program(static_cast<int>(state.range(0)));
  auto rt = runtime();
  CompileOptions co;
  co.cacheDir = std::filesystem::temp_directory_path() / ("hostjit-bench-cache-" + std::to_string(::getpid()));
  { auto first = gJit->compile(p, rt, co); }
  for (auto _ : state) {
    auto cp = gJit->compile(p, rt, co);
    if (!cp || !(*cp)->fromCache()) state.SkipWithError("not served from the cache");
  }
  std::filesystem::remove_all(co.cacheDir);
}

Program launchProgram(int launches) {
  Diagnostics d;
  Program p = parse(bench::launchProgram(launches), "bench.hir", d);
  if (!d.empty()) std::abort();
  return p;
}

// How a K-launch program becomes callable (the second argument):
enum CompileMode { kO0 = 0, kLight = 1, kO2 = 2, kTiered = 3, kCached = 4 };
const char *compileModeName(int m) {
  static const char *names[] = {"O0", "light", "O2", "tiered", "cached"};
  return names[m];
}

// Time until compile() returns a callable program. O0, light, O2: cold, the
// native code before the first call (no cache). tiered: the default (O2,
// no cache): callable at once, the evaluator serving calls until the native
// code is ready (waited for outside the timing). cached: O2 from the object cache.
void BM_CompileLaunches(benchmark::State &state) {
  int launches = static_cast<int>(state.range(0));
  int mode = static_cast<int>(state.range(1));
  Program p = launchProgram(launches);
  auto rt = runtime();
  CompileOptions co;
  co.opt = mode <= kO2 ? static_cast<OptLevel>(mode) : OptLevel::O2;
  co.useCache = mode == kCached;
  co.tiered = mode == kTiered;
  if (mode == kCached) {
    co.cacheDir = std::filesystem::temp_directory_path() / ("hostjit-bench-cache-" + std::to_string(::getpid()));
    co.tiered = false;
    auto first = gJit->compile(p, rt, co);
    if (!first) return state.SkipWithError(first.error().message.c_str());
  }
  for (auto _ : state) {
    auto cp = gJit->compile(p, rt, co);
    if (!cp) return state.SkipWithError(cp.error().message.c_str());
    state.PauseTiming();
    if (auto ok = (*cp)->waitNative(); !ok) return state.SkipWithError(ok.error().message.c_str());
    if (mode == kCached && !(*cp)->fromCache()) return state.SkipWithError("not served from the cache");
    cp->reset();
    state.ResumeTiming();
  }
  if (mode == kCached) std::filesystem::remove_all(co.cacheDir);
  state.SetLabel(compileModeName(mode));
}

// Host time of one call of a K-launch program: the native O2 code (mode 0)
// or the evaluator (mode 1), on the host backend with the empty kernel.
void BM_CallLaunches(benchmark::State &state) {
  int launches = static_cast<int>(state.range(0));
  bool eval = state.range(1) == 1;
  Program p = launchProgram(launches);
  auto rt = runtime();
  auto ev = Evaluator::create(p, rt);
  CompileOptions co;
  co.useCache = false;
  co.tiered = false;
  auto cp = gJit->compile(p, rt, co);
  if (!ev || !cp) return state.SkipWithError("cannot prepare the program");
  auto inputs = InputSet::random(rt, ev->plan(), {{"x", {64, 256}}}, 1);
  hj_context *ctx = rt->context();
  void *outData[1];
  int64_t outDims[2];
  for (auto _ : state) {
    int32_t st = eval ? ev->call(ctx, inputs->pointers().data(), nullptr, outData, outDims)
                      : (*cp)->call(ctx, inputs->pointers().data(), nullptr, outData, outDims);
    if (st) return state.SkipWithError(hj_last_error());
    hj_free(ctx, outData[0]);
  }
  state.SetLabel(eval ? "evaluator" : "native O2");
  if (rt->stats().live_bytes != 0) state.SkipWithError("leaked");
}

// The model-sized program (bench/model.cpp, 12 blocks: 171 launches) on the
// host backend with the empty kernel: the evaluator and the JIT (O2),
// interleaved in one run (bench/interleave.h).
void BM_InterleavedModel(benchmark::State &state) {
  Diagnostics d;
  Program p = parse(bench::modelProgram(12), "model.hir", d);
  if (!d.empty()) return state.SkipWithError(d.format("model.hir", p.source).c_str());
  auto rt = runtime();
  auto ev = Evaluator::create(p, rt);
  CompileOptions co;
  co.useCache = false;
  co.tiered = false;
  auto cp = gJit->compile(p, rt, co);
  if (!ev || !cp) return state.SkipWithError("cannot prepare the program");
  auto inputs = InputSet::random(rt, ev->plan(), bench::modelShapes(12), 1);
  if (!inputs) return state.SkipWithError(inputs.error().message.c_str());
  hj_value nh;
  nh.i64 = 4;
  hj_context *ctx = rt->context();
  void *outData[1];
  int64_t outDims[3];
  auto freeOut = [&](int32_t st) { return st ? st : hj_free(ctx, outData[0]); };
  bench::interleave(state, ctx, 16,
                    {{"eval", [&] { return freeOut(ev->call(ctx, inputs->pointers().data(), &nh, outData, outDims)); }},
                     {"jit", [&] { return freeOut((*cp)->call(ctx, inputs->pointers().data(), &nh, outData, outDims)); }}});
  if (rt->stats().live_bytes != 0) state.SkipWithError("leaked");
}

// BM_ShapeCycle of bench_graph.cpp on the host backend: the K = 16 program
// with x of [n, 256] for n cycling through D distinct values (scattered), eager JIT
// calls and graph mode interleaved. Shows hostjit's own cost of a new
// signature (trace, plan, nodes set), without the driver's. probation:
// HOSTJIT_GRAPH_PROBATION (-1: unset, the cache's size); past the cache's 1024 signatures, least
// recently used alone (0) traces every call anew and finds the entry to
// evict among all of them, while probation evicts its oldest entry at once
// and keeps some of the signatures that came back.
void BM_HostShapeCycle(benchmark::State &state) {
  int distinct = static_cast<int>(state.range(0));
  Program p = launchProgram(16);
  if (state.range(1) >= 0) setenv("HOSTJIT_GRAPH_PROBATION", std::to_string(state.range(1)).c_str(), 1);
  auto rt = runtime();
  unsetenv("HOSTJIT_GRAPH_PROBATION");
  CompileOptions co;
  co.useCache = false;
  co.tiered = false;
  auto cp = gJit->compile(p, rt, co);
  if (!cp) return state.SkipWithError("cannot prepare the program");
  hj_context *ctx = rt->context();
  std::vector<float> data(static_cast<size_t>(distinct) * 256, 1.5f);
  std::vector<int64_t> shapes(2 * static_cast<size_t>(distinct));
  std::vector<DLTensor> xs(static_cast<size_t>(distinct));
  for (int i = 0; i < distinct; ++i) {
    shapes[2 * i] = 1 + (int64_t(i) * 617) % distinct;
    shapes[2 * i + 1] = 256;
    xs[i] = DLTensor{};
    xs[i].data = data.data();
    xs[i].device = {kDLCPU, 0};
    xs[i].ndim = 2;
    xs[i].dtype = {kDLFloat, 32, 1};
    xs[i].shape = &shapes[2 * i];
  }
  void *outData[1];
  int64_t outDims[2];
  int next[2] = {0, 0};
  auto call = [&](int way, bool graph) {
    const DLTensor *in[] = {&xs[next[way]++ % distinct]};
    int32_t st = graph ? (*cp)->callGraph(ctx, in, nullptr, outData, outDims)
                       : (*cp)->call(ctx, in, nullptr, outData, outDims);
    return st ? st : hj_free(ctx, outData[0]);
  };
  bench::interleave(state, ctx, 64, {{"jit", [&] { return call(0, false); }}, {"graph", [&] { return call(1, true); }}});
  if (rt->stats().live_bytes != 0) state.SkipWithError("leaked");
}

// BM_ManyInputs of bench_graph.cpp on the host backend: 16 launches over M
// tensor inputs that never move, eager JIT calls and graph mode's fast
// replays interleaved: hostjit's own cost per input.
void BM_HostManyInputs(benchmark::State &state) {
  Diagnostics d;
  Program p = parse(bench::manyInputsProgram(static_cast<int>(state.range(0))), "many.hir", d);
  if (!d.empty()) return state.SkipWithError(d.format("many.hir", p.source).c_str());
  auto rt = runtime();
  CompileOptions co;
  co.useCache = false;
  co.tiered = false;
  auto cp = gJit->compile(p, rt, co);
  auto ev = Evaluator::create(p, rt);
  if (!cp || !ev) return state.SkipWithError("cannot prepare the program");
  auto inputs = InputSet::random(rt, ev->plan(), {}, 1);
  if (!inputs) return state.SkipWithError(inputs.error().message.c_str());
  hj_context *ctx = rt->context();
  void *outData[1];
  int64_t outDims[1];
  auto freeOut = [&](int32_t st) { return st ? st : hj_free(ctx, outData[0]); };
  const DLTensor *const *in = inputs->pointers().data();
  std::vector<uint32_t> all(static_cast<size_t>(state.range(0)));
  for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<uint32_t>(i);
  auto bound = (*cp)->bindStatic(in, all);
  if (!bound) return state.SkipWithError(bound.error().message.c_str());
  bench::interleave(
      state, ctx, 64,
      {{"jit", [&] { return freeOut((*cp)->call(ctx, in, nullptr, outData, outDims)); }},
       {"graph", [&] { return freeOut((*cp)->callGraph(ctx, in, nullptr, outData, outDims)); }},
       {"graph_static", [&] { return freeOut((*cp)->callGraph(ctx, in, nullptr, outData, outDims, &*bound)); }}});
  if (rt->stats().graph_fast == 0) state.SkipWithError("graph mode made no fast replay");
}

// Shared state of the call benchmarks: a runtime, inputs, the program.
struct CallSetup {
  Program p;
  std::shared_ptr<Runtime> rt = runtime();
  std::optional<InputSet> inputs;
  std::optional<Evaluator> ev;
  std::unique_ptr<CompiledProgram> cp;
  void *outData[1];
  int64_t outDims[2];
  explicit CallSetup(int segments, OptLevel opt = OptLevel::Light) : p(program(segments)) {
    ev.emplace(std::move(*Evaluator::create(p, rt)));
    inputs.emplace(std::move(*InputSet::random(rt, ev->plan(), {{"x", {64, 256}}}, 1)));
    CompileOptions co;
    co.useCache = false;
    co.tiered = false;
    co.opt = opt;
    cp = std::move(*gJit->compile(p, rt, co));
  }
};

// What a careful engineer writes by hand for the same program.
int32_t handWritten(hj_context *ctx, const hj_kernel_table *kt, const DLTensor *const *inputs, void **outData,
                    int64_t *outDims, int segments) {
  const DLTensor *x = inputs[0];
  int64_t n = x->shape[0], h = x->shape[1], total = n * h, blocks = (total + 255) / 256;
  int64_t ysizes[2] = {n, h};
  void *y = nullptr;
  if (int32_t st = hj_alloc(ctx, ysizes, nullptr, 2, HJ_DTYPE_f32, 0, "y", &y)) return st;
  int64_t dims[7] = {blocks, 1, 1, 256, 1, 1, 0};
  void *xdata = static_cast<char *>(x->data) + x->byte_offset;
  for (int i = 0; i < segments; ++i) {
    void *w = nullptr, *s = nullptr;
    if (int32_t st = hj_alloc(ctx, &blocks, nullptr, 1, HJ_DTYPE_f32, 0, "w", &w)) {
      hj_free_on_error(ctx, y);
      return st;
    }
    if (int32_t st = hj_alloc(ctx, &blocks, nullptr, 1, HJ_DTYPE_i32, HJ_ALLOC_ZERO_INIT | HJ_ALLOC_RESETS_TO_ZERO,
                              "s", &s)) {
      hj_free_on_error(ctx, w);
      hj_free_on_error(ctx, y);
      return st;
    }
    void *params[4] = {&xdata, &w, &s, &total};
    int32_t st = hj_launch(ctx, kt, 0, dims, params, "hand-written");
    int32_t st2 = hj_free(ctx, w);
    int32_t st3 = hj_free(ctx, s);
    if (st || st2 || st3) {
      hj_free_on_error(ctx, y);
      return st ? st : st2 ? st2 : st3;
    }
  }
  outData[0] = y;
  outDims[0] = n;
  outDims[1] = h;
  return HJ_OK;
}

void finishCall(benchmark::State &state, CallSetup &s, int segments) {
  int64_t calls = state.iterations();
  state.counters["ns_per_stmt"] =
      benchmark::Counter(static_cast<double>(calls) * (5 * segments + 3), benchmark::Counter::kIsRate |
                                                                              benchmark::Counter::kInvert);
  if (s.rt->stats().live_bytes != 0) state.SkipWithError("leaked");
}

void BM_CallJit(benchmark::State &state) {
  int segments = static_cast<int>(state.range(0));
  CallSetup s(segments, static_cast<OptLevel>(state.range(1)));
  state.SetLabel(std::string("opt=") + optLevelName(static_cast<OptLevel>(state.range(1))));
  hj_context *ctx = s.rt->context();
  for (auto _ : state) {
    if (s.cp->call(ctx, s.inputs->pointers().data(), nullptr, s.outData, s.outDims)) state.SkipWithError(hj_last_error());
    hj_free(ctx, s.outData[0]);
  }
  finishCall(state, s, segments);
}

void BM_CallEval(benchmark::State &state) {
  int segments = static_cast<int>(state.range(0));
  CallSetup s(segments);
  hj_context *ctx = s.rt->context();
  for (auto _ : state) {
    if (s.ev->call(ctx, s.inputs->pointers().data(), nullptr, s.outData, s.outDims)) state.SkipWithError(hj_last_error());
    hj_free(ctx, s.outData[0]);
  }
  finishCall(state, s, segments);
}

void BM_CallHand(benchmark::State &state) {
  int segments = static_cast<int>(state.range(0));
  CallSetup s(segments);
  hj_context *ctx = s.rt->context();
  const hj_kernel_table *kt = s.cp->kernels();
  for (auto _ : state) {
    if (handWritten(ctx, kt, s.inputs->pointers().data(), s.outData, s.outDims, segments))
      state.SkipWithError(hj_last_error());
    hj_free(ctx, s.outData[0]);
  }
  finishCall(state, s, segments);
}

// The convenient API: argument checks and owning output tensors included.
void BM_RunJit(benchmark::State &state) {
  CallSetup s(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    auto out = s.cp->run(s.inputs->span());
    if (!out) state.SkipWithError(out.error().message.c_str());
  }
}

}  // namespace

BENCHMARK(BM_JitCreate)->Unit(benchmark::kMillisecond)->Iterations(5);
BENCHMARK(BM_CompileCold)
    ->ArgsProduct({{3, 30, 300}, {0, 1, 2}})
    ->ArgNames({"launches", "opt"})
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CompileWarm)->ArgNames({"launches"})->Arg(3)->Arg(30)->Arg(300)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_CallHand)->ArgNames({"launches"})->Arg(1)->Arg(3)->Arg(30);
BENCHMARK(BM_CallJit)->ArgsProduct({{1, 3, 30}, {0, 1, 2}})->ArgNames({"launches", "opt"});
BENCHMARK(BM_CallEval)->ArgNames({"launches"})->Arg(1)->Arg(3)->Arg(30);
BENCHMARK(BM_RunJit)->ArgNames({"launches"})->Arg(1)->Arg(3)->Arg(30);
BENCHMARK(BM_CompileLaunches)
    ->ArgsProduct({{16, 64, 256, 1000}, {kO0, kLight, kO2, kTiered, kCached}})
    ->ArgNames({"launches", "mode"})
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_InterleavedModel)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_HostManyInputs)->ArgNames({"M"})->Arg(1)->Arg(16)->Arg(150)->Arg(300)->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_HostShapeCycle)
    ->ArgNames({"D", "probation"})
    ->Args({1, -1})
    ->Args({16, -1})
    ->Args({1000, -1})
    ->Args({1000, 64})
    ->Args({4096, -1})
    ->Args({4096, 64})
    ->Args({4096, 0})
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_CallLaunches)->ArgsProduct({{16, 64, 256, 1000}, {0, 1}})->ArgNames({"launches", "eval"});

int main(int argc, char **argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  gJit = std::move(*Jit::create());
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  gJit.reset();
  return 0;
}
