// bench_graph.cpp - host cost per call of a launch-bound program of K empty
// kernels (bench/programs.cpp: an intermediate per launch, a zeroed
// semaphore every fourth) on the CUDA backend, in one run for every way of
// issuing it: the evaluator, the JIT, hand-written C++ making the same
// runtime calls, bare cuLaunchKernel on pre-allocated buffers (the floor), a
// CUDA graph captured by hand and replayed (the anchor; also the same graph
// made node by node, as graph mode makes its graphs), and hostjit's graph
// mode with inputs at the same addresses and at fresh addresses on every
// call; the first call of a new signature in graph mode (trace, plan,
// build, instantiate, launch); a program of M inputs that never move (by
// the raw entry, and by Executable::run as a user's code calls it); and
// the program with an input extent that changes on every call. Each iteration times a batch of calls being
// issued; the stream is synchronised after the batch, outside the timing.
//
// HOSTJIT_SOURCE_DIR (environment) names the source tree when the binary
// runs elsewhere than it was built.
#include <benchmark/benchmark.h>
#include <cuda.h>  // types and prototypes only: the driver is loaded with dlopen
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <map>
#include <optional>

#include "cuda_bench.h"
#include "hostjit/exec/evaluator.h"
#include "hostjit/exec/host_data.h"
#include "hostjit/jit.h"
#include "hostjit/text/text.h"
#include "interleave.h"
#include "programs.h"

using namespace hostjit;

namespace {

constexpr int kBatch = 64;
constexpr int kFresh = 8;  // input and output copies the fresh-address mode rotates through
std::unique_ptr<Jit> gJit;

struct Driver {
#define HJ_BENCH_CUDA_FN(sym) decltype(&::sym) sym = nullptr;
#define HJ_BENCH_CUDA_FNS                      \
  HJ_BENCH_CUDA_FN(cuLaunchKernel)             \
  HJ_BENCH_CUDA_FN(cuStreamBeginCapture_v2)    \
  HJ_BENCH_CUDA_FN(cuStreamEndCapture)         \
  HJ_BENCH_CUDA_FN(cuGraphInstantiateWithFlags) \
  HJ_BENCH_CUDA_FN(cuGraphLaunch)              \
  HJ_BENCH_CUDA_FN(cuGraphExecDestroy)         \
  HJ_BENCH_CUDA_FN(cuGraphCreate)              \
  HJ_BENCH_CUDA_FN(cuGraphAddKernelNode_v2)    \
  HJ_BENCH_CUDA_FN(cuGraphDestroy)
  HJ_BENCH_CUDA_FNS
#undef HJ_BENCH_CUDA_FN
  bool ok = false;
  Driver() {
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (!lib) return;
    ok = true;
#define HJ_BENCH_CUDA_FN(sym) ok = ok && (sym = reinterpret_cast<decltype(&::sym)>(dlsym(lib, #sym)));
    HJ_BENCH_CUDA_FNS
#undef HJ_BENCH_CUDA_FN
  }
};

std::string sourceDir() {
  const char *d = std::getenv("HOSTJIT_SOURCE_DIR");
  return d && *d ? d : HOSTJIT_SOURCE_DIR;
}

constexpr int kModelLayers = 12;

// One program, compiled and prepared for the evaluator, with kFresh sets of
// inputs: the launch-bound program of K launches (inputs of 64 x 256
// floats), or the model-sized one.
struct Setup {
  int k = 0;  // launches of the launch-bound program; 0 for the model
  std::shared_ptr<Runtime> rt;
  Program p;
  std::optional<Evaluator> ev;
  std::unique_ptr<CompiledProgram> cp;
  std::vector<InputSet> inputs;  // kFresh copies
  std::vector<hj_value> scalars;
  void *outData[1] = {};
  int64_t outDims[3] = {};
  std::string error;

  // profile: the runtime profiles (hj_options.profile).
  explicit Setup(int launches, int64_t perBlock = 256, bool profile = false, bool boundsChecked = false)
      : Setup(bench::launchProgram(launches, sourceDir() + "/bench/kernels/steps.cu", perBlock, boundsChecked),
              {{"x", {64, 256}}}, {}, profile) {
    k = launches;
  }
  static Setup model() {
    return Setup(bench::modelProgram(kModelLayers, sourceDir() + "/bench/kernels/model.cu"),
                 bench::modelShapes(kModelLayers), {ScalarArg::i64(4)});
  }
  Setup(const std::string &text, const std::map<std::string, std::vector<int64_t>> &shapes,
        std::vector<ScalarArg> scalarArgs, bool profile = false) {
    auto r = bench::cudaBenchRuntime(profile);
    if (!r) {
      error = r.error().message;
      return;
    }
    rt = *r;
    Diagnostics d;
    p = parse(text, "bench.hir", d);
    if (!d.empty()) {
      error = d.format("bench.hir", p.source);
      return;
    }
    auto e = Evaluator::create(p, rt);
    if (!e) {
      error = e.error().message;
      return;
    }
    ev.emplace(std::move(*e));
    CompileOptions co;
    co.tiered = false;
    auto c = gJit->compile(p, rt, co);
    if (!c) {
      error = c.error().message;
      return;
    }
    cp = std::move(*c);
    for (int i = 0; i < kFresh; ++i) {
      auto in = InputSet::random(rt, ev->plan(), shapes, static_cast<uint64_t>(i + 1));
      if (!in) {
        error = in.error().message;
        return;
      }
      inputs.push_back(std::move(*in));
    }
    scalars.resize(scalarArgs.size());
    packScalars(scalarArgs, scalars.data());
  }
  const DLTensor *const *in(int i = 0) const { return inputs[static_cast<size_t>(i)].pointers().data(); }
  const hj_value *sc() const { return scalars.empty() ? nullptr : scalars.data(); }
};

template <class Fn>
void timeBatches(benchmark::State &state, Setup &s, Fn &&issue) {
  for (auto _ : state) {
    auto a = std::chrono::steady_clock::now();
    for (int i = 0; i < kBatch; ++i) issue();
    auto b = std::chrono::steady_clock::now();
    state.SetIterationTime(std::chrono::duration<double>(b - a).count());
    if (hj_synchronize(s.rt->context())) state.SkipWithError(hj_last_error());
  }
  state.counters["us_per_call"] = benchmark::Counter(static_cast<double>(state.iterations()) * kBatch / 1e6,
                                                     benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

void finish(benchmark::State &state, Setup &s) {
  hj_stats st = s.rt->stats();
  state.counters["launches"] = static_cast<double>(st.launches);
  state.counters["graph_updates"] = static_cast<double>(st.graph_updates);
  state.counters["graph_grid_updates"] = static_cast<double>(st.graph_grid_updates);
  state.counters["graph_builds"] = static_cast<double>(st.graph_builds);
  if (st.live_bytes != 0) state.SkipWithError("leaked");
}

// The same runtime calls as the program, written by hand.
int32_t handWritten(hj_context *ctx, const hj_kernel_table *kt, const DLTensor *x, int k, void **outData,
                    int64_t *outDims) {
  int64_t n = x->shape[0], h = x->shape[1], total = n * h, blocks = (total + 255) / 256;
  int64_t ysizes[2] = {n, h};
  void *y = nullptr;
  if (int32_t st = hj_alloc(ctx, ysizes, nullptr, 2, HJ_DTYPE_f32, HJ_ALLOC_OUTPUT, "y", &y)) return st;
  int64_t dims[7] = {blocks, 1, 1, 256, 1, 1, 0};
  void *xdata = static_cast<char *>(x->data) + x->byte_offset;
  for (int i = 0; i < k; ++i) {
    void *w = nullptr, *s = nullptr;
    int32_t st = hj_alloc(ctx, &blocks, nullptr, 1, HJ_DTYPE_f32, 0, "w", &w);
    if (st == HJ_OK && i % 4 == 0)
      st = hj_alloc(ctx, &blocks, nullptr, 1, HJ_DTYPE_i32, HJ_ALLOC_ZERO_INIT | HJ_ALLOC_RESETS_TO_ZERO, "s", &s);
    if (st == HJ_OK) {
      void *withSem[4] = {&xdata, &w, &s, &total}, *plain[3] = {&xdata, &w, &total};
      st = i % 4 == 0 ? hj_launch(ctx, kt, 1, dims, withSem, "hand-written") : hj_launch(ctx, kt, 0, dims, plain, "hand-written");
    }
    if (s) st = st ? (hj_free_on_error(ctx, s), st) : hj_free(ctx, s);
    if (w) st = st ? (hj_free_on_error(ctx, w), st) : hj_free(ctx, w);
    if (st) {
      hj_free_on_error(ctx, y);
      return st;
    }
  }
  outData[0] = y;
  outDims[0] = n;
  outDims[1] = h;
  return HJ_OK;
}

// kGraphSameProfiled: kGraphSame on a profiling runtime.
enum Mode { kEval, kJit, kHand, kGraphSame, kGraphFresh, kGraphSameProfiled };

void BM_Call(benchmark::State &state, Mode mode) {
  Setup s(static_cast<int>(state.range(0)), 256, mode == kGraphSameProfiled);
  if (!s.error.empty()) return state.SkipWithError(s.error.c_str());
  hj_context *ctx = s.rt->context();
  void *kept[kFresh] = {};
  int call = 0;
  auto issue = [&] {
    int32_t st = HJ_OK;
    switch (mode) {
      case kEval: st = s.ev->call(ctx, s.in(), s.sc(), s.outData, s.outDims); break;
      case kJit: st = s.cp->call(ctx, s.in(), s.sc(), s.outData, s.outDims); break;
      case kHand: st = handWritten(ctx, s.cp->kernels(), s.in()[0], s.k, s.outData, s.outDims); break;
      case kGraphSame:
      case kGraphSameProfiled: st = s.cp->callGraph(ctx, s.in(), s.sc(), s.outData, s.outDims); break;
      case kGraphFresh: {
        // A new input address every call, and the outputs of the last
        // kFresh calls still held by the caller.
        int slot = call++ % kFresh;
        if (kept[slot]) hj_free(ctx, kept[slot]);
        st = s.cp->callGraph(ctx, s.in(slot), s.sc(), s.outData, s.outDims);
        kept[slot] = st ? nullptr : s.outData[0];
        return st;
      }
    }
    if (st == HJ_OK) hj_free(ctx, s.outData[0]);
    return st;
  };
  if (issue()) return state.SkipWithError(hj_last_error());  // warm: kernels, pool, graph
  hj_synchronize(ctx);
  hj_reset_stats(ctx);
  timeBatches(state, s, [&] {
    if (issue()) state.SkipWithError(hj_last_error());
  });
  for (void *p : kept)
    if (p) hj_free(ctx, p);
  finish(state, s);
}

// The floor and the anchor: the same K kernels on buffers allocated once,
// launched one by one with cuLaunchKernel, or captured once into a CUDA
// graph that is replayed.
enum DriverMode { kBare, kCaptured, kNodes };

// The launch-bound program's K kernels on buffers allocated once, launched
// one by one with cuLaunchKernel: no hostjit code between the launches.
struct BareLaunches {
  const Setup &s;
  Driver &d;
  int64_t total = 0, blocks = 0;
  std::vector<void *> work, sems;
  void *fn[2] = {};
  CUstream stream = nullptr;
  void *xdata = nullptr;
  BareLaunches(const Setup &setup, Driver &driver) : s(setup), d(driver) {
    hj_context *ctx = s.rt->context();
    const DLTensor *x = s.in()[0];
    total = x->shape[0] * x->shape[1], blocks = (total + 255) / 256;
    work.resize(static_cast<size_t>(s.k));
    sems.resize(static_cast<size_t>(s.k));
    for (int i = 0; i < s.k; ++i) {
      hj_alloc(ctx, &blocks, nullptr, 1, HJ_DTYPE_f32, 0, "w", &work[i]);
      hj_alloc(ctx, &blocks, nullptr, 1, HJ_DTYPE_i32, HJ_ALLOC_ZERO_INIT, "s", &sems[i]);
    }
    hj_kernel_table_native(s.cp->kernels(), 0, &fn[0]);
    hj_kernel_table_native(s.cp->kernels(), 1, &fn[1]);
    stream = static_cast<CUstream>(hj_context_native_stream(ctx));
    xdata = x->data;
  }
  ~BareLaunches() {
    for (int i = 0; i < s.k; ++i) {
      hj_free(s.rt->context(), work[i]);
      hj_free(s.rt->context(), sems[i]);
    }
  }
  void *const *params(int i, void **withSem, void **plain) {
    withSem[0] = plain[0] = &xdata;
    withSem[1] = plain[1] = &work[i];
    withSem[2] = &sems[i];
    withSem[3] = plain[2] = &total;
    return i % 4 == 0 ? withSem : plain;
  }
  void launchAll() {
    for (int i = 0; i < s.k; ++i) {
      void *withSem[4], *plain[3];
      d.cuLaunchKernel(static_cast<CUfunction>(fn[i % 4 == 0]), unsigned(blocks), 1, 1, 256, 1, 1, 0, stream,
                       const_cast<void **>(params(i, withSem, plain)), nullptr);
    }
  }
};

void BM_Driver(benchmark::State &state, DriverMode mode) {
  Setup s(static_cast<int>(state.range(0)));  // loads the driver
  if (!s.error.empty()) return state.SkipWithError(s.error.c_str());
  static Driver d;
  if (!d.ok) return state.SkipWithError("the CUDA driver's functions were not found");
  hj_context *ctx = s.rt->context();
  BareLaunches bare(s, d);
  auto launchAll = [&] { bare.launchAll(); };
  hj_synchronize(ctx);
  if (mode == kBare) {
    timeBatches(state, s, launchAll);
  } else {
    CUgraph g = nullptr;
    CUgraphExec exec = nullptr;
    if (mode == kCaptured) {
      if (d.cuStreamBeginCapture_v2(bare.stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL) != CUDA_SUCCESS)
        return state.SkipWithError("cuStreamBeginCapture failed");
      launchAll();
      if (d.cuStreamEndCapture(bare.stream, &g) != CUDA_SUCCESS) return state.SkipWithError("capturing the graph failed");
    } else {
      // The same chain made node by node, as graph mode builds its graphs.
      d.cuGraphCreate(&g, 0);
      CUgraphNode prev = nullptr;
      for (int i = 0; i < s.k; ++i) {
        void *withSem[4], *plain[3];
        CUDA_KERNEL_NODE_PARAMS p{};
        p.func = static_cast<CUfunction>(bare.fn[i % 4 == 0]);
        p.gridDimX = unsigned(bare.blocks);
        p.gridDimY = p.gridDimZ = 1;
        p.blockDimX = 256;
        p.blockDimY = p.blockDimZ = 1;
        p.kernelParams = const_cast<void **>(bare.params(i, withSem, plain));
        CUgraphNode node = nullptr;
        if (d.cuGraphAddKernelNode_v2(&node, g, prev ? &prev : nullptr, prev ? 1 : 0, &p) != CUDA_SUCCESS)
          return state.SkipWithError("cuGraphAddKernelNode failed");
        prev = node;
      }
    }
    if (d.cuGraphInstantiateWithFlags(&exec, g, 0) != CUDA_SUCCESS)
      return state.SkipWithError("cuGraphInstantiate failed");
    timeBatches(state, s, [&] { d.cuGraphLaunch(exec, bare.stream); });
    hj_synchronize(ctx);
    d.cuGraphExecDestroy(exec);
    d.cuGraphDestroy(g);
  }
}

// The launch-bound program of K launches: the driver alone, the same
// runtime calls written by hand, the evaluator, the JIT.
void BM_Interleaved(benchmark::State &state) {
  Setup s(static_cast<int>(state.range(0)));
  if (!s.error.empty()) return state.SkipWithError(s.error.c_str());
  static Driver d;
  if (!d.ok) return state.SkipWithError("the CUDA driver's functions were not found");
  hj_context *ctx = s.rt->context();
  auto freeOut = [&](int32_t st) { return st ? st : hj_free(ctx, s.outData[0]); };
  {
    BareLaunches bare(s, d);  // its buffers freed before finish() looks for leaks
    bench::interleave(state, ctx, kBatch,
                      {{"bare", [&] {
                          bare.launchAll();
                          return HJ_OK;
                        }},
                       {"hand", [&] { return freeOut(handWritten(ctx, s.cp->kernels(), s.in()[0], s.k, s.outData, s.outDims)); }},
                       {"eval", [&] { return freeOut(s.ev->call(ctx, s.in(), s.sc(), s.outData, s.outDims)); }},
                       {"jit", [&] { return freeOut(s.cp->call(ctx, s.in(), s.sc(), s.outData, s.outDims)); }}});
  }
  finish(state, s);
}

// The model-sized program (bench/model.cpp, 12 blocks: 171 launches, 243
// allocations): the evaluator, the JIT, and graph mode's replay.
void BM_InterleavedModel(benchmark::State &state) {
  Setup s = Setup::model();
  if (!s.error.empty()) return state.SkipWithError(s.error.c_str());
  hj_context *ctx = s.rt->context();
  auto freeOut = [&](int32_t st) { return st ? st : hj_free(ctx, s.outData[0]); };
  bench::interleave(state, ctx, kBatch,
                    {{"eval", [&] { return freeOut(s.ev->call(ctx, s.in(), s.sc(), s.outData, s.outDims)); }},
                     {"jit", [&] { return freeOut(s.cp->call(ctx, s.in(), s.sc(), s.outData, s.outDims)); }},
                     {"graph", [&] { return freeOut(s.cp->callGraph(ctx, s.in(), s.sc(), s.outData, s.outDims)); }}});
  finish(state, s);
}

// A program of 16 launches over M inputs that never move (a model's
// weights, bench/programs.cpp): eager JIT calls and graph mode's fast
// replays, interleaved; the cost a replay adds per input.
void BM_ManyInputs(benchmark::State &state) {
  int m = static_cast<int>(state.range(0));
  std::map<std::string, std::vector<int64_t>> shapes;
  Setup s(bench::manyInputsProgram(m, sourceDir() + "/bench/kernels/steps.cu"), shapes, {});
  if (!s.error.empty()) return state.SkipWithError(s.error.c_str());
  hj_context *ctx = s.rt->context();
  auto freeOut = [&](int32_t st) { return st ? st : hj_free(ctx, s.outData[0]); };
  // graph_static: every input bound once (bindStatic), as a model's weights.
  std::vector<uint32_t> all(static_cast<size_t>(m));
  for (int i = 0; i < m; ++i) all[size_t(i)] = static_cast<uint32_t>(i);
  auto bound = s.cp->bindStatic(s.in(), all);
  if (!bound) return state.SkipWithError(bound.error().message.c_str());
  bench::interleave(
      state, ctx, kBatch,
      {{"jit", [&] { return freeOut(s.cp->call(ctx, s.in(), s.sc(), s.outData, s.outDims)); }},
       {"graph", [&] { return freeOut(s.cp->callGraph(ctx, s.in(), s.sc(), s.outData, s.outDims)); }},
       {"graph_static", [&] { return freeOut(s.cp->callGraph(ctx, s.in(), s.sc(), s.outData, s.outDims, &*bound)); }}});
  hj_stats st = s.rt->stats();
  if (st.graph_fast == 0) state.SkipWithError("graph mode made no fast replay");
  finish(state, s);
}

// BM_ManyInputs as a user's program calls it: Executable::run (arguments
// checked, outputs owned) in graph mode, with DLTensors made once and
// passed on every call, without and with a binding (every input bound once
// by Executable::bindStatic, as a model's weights would be), interleaved.
// One program per benchmark, as a user's loop calls one: `jit` 1 the
// compiled program, 0 the evaluator. (A thread's last-call caches hold one
// program: interleaving two would miss them on every call.)
void BM_ManyInputsRun(benchmark::State &state) {
  int m = static_cast<int>(state.range(0));
  bool jit = state.range(1) != 0;
  Setup s(bench::manyInputsProgram(m, sourceDir() + "/bench/kernels/steps.cu"), {}, {});
  if (!s.error.empty()) return state.SkipWithError(s.error.c_str());
  Executable &x = jit ? static_cast<Executable &>(*s.cp) : *s.ev;
  x.setGraphMode(true);
  std::span<const DLTensor *const> in(s.in(), static_cast<size_t>(m));
  std::vector<uint32_t> all(static_cast<size_t>(m));
  for (int i = 0; i < m; ++i) all[size_t(i)] = static_cast<uint32_t>(i);
  auto bound = x.bindStatic(s.in(), all);
  if (!bound) return state.SkipWithError(bound.error().message.c_str());
  auto run = [&](const StaticInputs *b) -> int32_t {
    auto out = x.run(in, {}, b);
    return out ? HJ_OK : out.error().status;
  };
  bench::interleave(state, s.rt->context(), kBatch,
                    {{"run", [&] { return run(nullptr); }}, {"run_bound", [&] { return run(&*bound); }}});
  if (s.rt->stats().graph_fast == 0) state.SkipWithError("graph mode made no fast replay");
  finish(state, s);
}

// The launch-bound program of K launches with an input extent that changes
// on every call: x is [n, 256], over one buffer, for n cycling through D
// distinct values, scattered (growing and shrinking) or growing by one per
// call like a decode loop (then starting again at 1). Eager JIT calls and
// graph mode, interleaved. `rows`: rows of x per block of the grid (1: the
// grid changes with every n; 16: every 16th). `cache`: 0 for the default
// cache, else HOSTJIT_GRAPH_CACHE and HOSTJIT_GRAPHS_PER_SHAPE set to it
// (a graph per signature).
// boundsChecked: the kernels are bounds_checked (graph mode rounds their grids).
void shapeCycle(benchmark::State &state, bool boundsChecked) {
  int k = static_cast<int>(state.range(0)), distinct = static_cast<int>(state.range(1));
  bool growing = state.range(2) != 0;
  int64_t rows = state.range(3), cache = state.range(4);
  if (cache) {
    setenv("HOSTJIT_GRAPH_CACHE", std::to_string(cache).c_str(), 1);
    setenv("HOSTJIT_GRAPHS_PER_SHAPE", std::to_string(cache).c_str(), 1);
  }
  Setup s(k, 256 * rows, false, boundsChecked);
  unsetenv("HOSTJIT_GRAPH_CACHE");
  unsetenv("HOSTJIT_GRAPHS_PER_SHAPE");
  if (!s.error.empty()) return state.SkipWithError(s.error.c_str());
  hj_context *ctx = s.rt->context();
  void *data = nullptr;
  if (hj_buffer_alloc(ctx, size_t(distinct) * 256 * sizeof(float), &data)) return state.SkipWithError(hj_last_error());
  std::vector<int64_t> shapes(2 * static_cast<size_t>(distinct));
  std::vector<DLTensor> xs(static_cast<size_t>(distinct));
  for (int i = 0; i < distinct; ++i) {
    // 617 is prime to 1000 (and to every D tried): every extent once.
    shapes[2 * i] = growing ? 1 + i : 1 + (int64_t(i) * 617) % distinct;
    shapes[2 * i + 1] = 256;
    xs[i] = *s.in()[0];
    xs[i].data = data;
    xs[i].shape = &shapes[2 * i];
    xs[i].strides = nullptr;
  }
  int next[2] = {0, 0};
  auto call = [&](int way, bool graph) {
    const DLTensor *in[] = {&xs[next[way]++ % distinct]};
    int32_t st = graph ? s.cp->callGraph(ctx, in, s.sc(), s.outData, s.outDims)
                       : s.cp->call(ctx, in, s.sc(), s.outData, s.outDims);
    return st ? st : hj_free(ctx, s.outData[0]);
  };
  bench::interleave(state, ctx, kBatch, {{"jit", [&] { return call(0, false); }}, {"graph", [&] { return call(1, true); }}});
  hj_stats st = s.rt->stats();
  state.counters["graph_builds"] = static_cast<double>(st.graph_builds);
  state.counters["graph_reuses"] = static_cast<double>(st.graph_reuses);
  state.counters["graph_replans"] = static_cast<double>(st.graph_replans);
  state.counters["graph_fast"] = static_cast<double>(st.graph_fast);
  state.counters["graph_bytes"] = static_cast<double>(st.graph_bytes);
  // What the largest shape's buffers need at once (an eager call's peak,
  // its output included): the plan's memory is compared with it.
  state.counters["peak_bytes"] = static_cast<double>(st.peak_bytes);
  hj_buffer_free(ctx, data);
  finish(state, s);
}

void BM_ShapeCycle(benchmark::State &state) { shapeCycle(state, false); }
// The same with bounds_checked kernels: new signatures set arguments only.
void BM_ShapeCycleChecked(benchmark::State &state) { shapeCycle(state, true); }

void shapeCycles(benchmark::internal::Benchmark *b) {
  b->ArgNames({"K", "D", "growing", "rows", "cache"});
  for (int d : {1, 4, 16, 64, 256, 1000}) b->Args({16, d, 0, 1, 0});
  for (int k : {1, 4, 64}) b->Args({k, 1000, 0, 1, 0});
  for (int k : {16, 64}) {
    b->Args({k, 1000, 1, 1, 0});   // decode-like, the grid follows n
    b->Args({k, 1000, 1, 16, 0});  // decode-like, the grid grows every 16 calls
  }
  b->Args({16, 1000, 0, 1, 1024});  // a graph per signature
  b->Args({16, 1000, 1, 16, 1024});
  b->UseManualTime()->Unit(benchmark::kMicrosecond);
}

// What a changed shape costs a replay: K launches, x of n rows, one graph
// for every signature (HOSTJIT_GRAPHS_PER_SHAPE=1), so that a signature
// whose shape differs from the last call's is a fast replay that sets its
// nodes (grids, arguments, memset sizes) before the launch. "same" replays
// one extent (nothing to set); "changing" cycles through D = 8 extents, all
// cached, each call updating the nodes that differ from the last. `device`:
// HOSTJIT_GRAPH_DEVICE_UPDATES (0: the host sets every node; 1: the kernel
// nodes take theirs at launch, from the graph's updater). Counters: nodes
// updated per changing call, and of those set at launch.
void BM_ShapeUpdate(benchmark::State &state) {
  int k = static_cast<int>(state.range(0));
  bool device = state.range(1) != 0;
  constexpr int kDistinct = 8;
  setenv("HOSTJIT_GRAPHS_PER_SHAPE", "1", 1);
  setenv("HOSTJIT_GRAPH_DEVICE_UPDATES", device ? "1" : "0", 1);
  Setup s(k, 256);
  unsetenv("HOSTJIT_GRAPHS_PER_SHAPE");
  unsetenv("HOSTJIT_GRAPH_DEVICE_UPDATES");
  if (!s.error.empty()) return state.SkipWithError(s.error.c_str());
  hj_context *ctx = s.rt->context();
  void *data = nullptr;
  if (hj_buffer_alloc(ctx, size_t(64) * 256 * sizeof(float), &data)) return state.SkipWithError(hj_last_error());
  std::vector<int64_t> shapes(2 * kDistinct + 2);
  std::vector<DLTensor> xs(kDistinct + 1);
  for (int i = 0; i <= kDistinct; ++i) {
    shapes[2 * i] = i < kDistinct ? 8 + 7 * i : 40;  // rows: a new grid for each (one block a row)
    shapes[2 * i + 1] = 256;
    xs[i] = *s.in()[0];
    xs[i].data = data;
    xs[i].shape = &shapes[2 * i];
    xs[i].strides = nullptr;
  }
  int next = 0;
  uint64_t changing = 0;
  auto call = [&](const DLTensor *x) {
    const DLTensor *in[] = {x};
    int32_t st = s.cp->callGraph(ctx, in, s.sc(), s.outData, s.outDims);
    return st ? st : hj_free(ctx, s.outData[0]);
  };
  bench::interleave(state, ctx, kBatch,
                    {{"same", [&] { return call(&xs[kDistinct]); }},
                     {"changing", [&] {
                        ++changing;
                        return call(&xs[next++ % kDistinct]);
                      }}});
  // Per changing call (the first "same" call of each batch sets the nodes
  // back too: one call in 64 counted here).
  hj_stats st = s.rt->stats();
  double calls = changing ? static_cast<double>(changing) : 1;
  state.counters["nodes_updated"] = static_cast<double>(st.graph_updates) / calls;
  state.counters["at_launch"] = static_cast<double>(st.graph_device_updates) / calls;
  state.counters["graph_builds"] = static_cast<double>(st.graph_builds);
  hj_buffer_free(ctx, data);
  finish(state, s);
}

// A decode loop's first pass: 1000 calls whose extent grows by one row
// (256 floats) each, every one a new signature, from an empty cache (the
// graphs are dropped before each pass, untimed); time per call. way 0:
// eager calls; 1: graph mode; 2: graph mode after reserving the largest
// shape (hj_graph_reserve), so the plan never grows; 3: as 2, with the
// kernels bounds_checked (grids rounded up: most new signatures set only
// their nodes' arguments).
struct DecodeLoop {
  static constexpr int kCalls = 1000;
  Setup s;
  void *data = nullptr;
  std::vector<int64_t> shapes;
  std::vector<DLTensor> xs;
  std::string error;

  DecodeLoop(int k, bool boundsChecked) : s(k, 256, false, boundsChecked) {
    error = s.error;
    if (!error.empty()) return;
    if (hj_buffer_alloc(s.rt->context(), size_t(kCalls) * 256 * sizeof(float), &data)) {
      error = hj_last_error();
      return;
    }
    shapes.resize(2 * kCalls);
    xs.resize(kCalls);
    for (int i = 0; i < kCalls; ++i) {
      shapes[2 * i] = 1 + i;
      shapes[2 * i + 1] = 256;
      xs[i] = *s.in()[0];
      xs[i].data = data;
      xs[i].shape = &shapes[2 * i];
      xs[i].strides = nullptr;
    }
  }
  ~DecodeLoop() { release(); }
  // Frees x's buffer (before finish() looks for leaks).
  void release() {
    if (data) hj_buffer_free(s.rt->context(), data);
    data = nullptr;
  }
  // One pass of `way` (BM_DecodePass) from an empty cache, ended by a
  // synchronize: seconds per call in *perCall.
  int32_t pass(int way, double *perCall) {
    hj_context *ctx = s.rt->context();
    hj_graph_clear(ctx);
    hj_synchronize(ctx);
    auto a = std::chrono::steady_clock::now();
    int32_t st = HJ_OK;
    if (way >= 2) {
      const DLTensor *in[] = {&xs[kCalls - 1]};
      st = s.cp->reserveGraph(ctx, in, s.sc());
    }
    for (int i = 0; i < kCalls && st == HJ_OK; ++i) {
      const DLTensor *in[] = {&xs[i]};
      st = way ? s.cp->callGraph(ctx, in, s.sc(), s.outData, s.outDims)
               : s.cp->call(ctx, in, s.sc(), s.outData, s.outDims);
      if (st == HJ_OK) st = hj_free(ctx, s.outData[0]);
    }
    if (st == HJ_OK) st = hj_synchronize(ctx);
    auto b = std::chrono::steady_clock::now();
    *perCall = std::chrono::duration<double>(b - a).count() / kCalls;
    return st;
  }
};

void BM_DecodePass(benchmark::State &state) {
  int k = static_cast<int>(state.range(0)), way = static_cast<int>(state.range(1));
  DecodeLoop loop(k, /*boundsChecked=*/way == 3);
  if (!loop.error.empty()) return state.SkipWithError(loop.error.c_str());
  uint64_t replans = 0, passes = 0;
  for (auto _ : state) {
    uint64_t before = loop.s.rt->stats().graph_replans;
    double t = 0;
    if (loop.pass(way, &t)) return state.SkipWithError(hj_last_error());
    state.SetIterationTime(t);
    replans += loop.s.rt->stats().graph_replans - before;
    ++passes;
  }
  state.counters["graph_replans"] = passes ? static_cast<double>(replans) / static_cast<double>(passes) : 0;
  state.counters["graph_bytes"] = static_cast<double>(loop.s.rt->stats().graph_bytes);
  loop.release();
  finish(state, loop.s);
}

// The decode pass under HOSTJIT_GRAPH_DEVICE_UPDATES auto, 1 and 0, one
// context each, their passes alternating (the first of each round
// rotating): µs per call of each (median of the rounds), device time
// included (a pass ends with a synchronize). checked: bounds_checked
// kernels and a reservation (BM_DecodePass way 3), else way 1.
void BM_DecodeModes(benchmark::State &state) {
  int k = static_cast<int>(state.range(0));
  bool checked = state.range(1) != 0;
  const char *modes[] = {"auto", "1", "0"};
  std::vector<std::unique_ptr<DecodeLoop>> loops;
  for (const char *m : modes) {
    setenv("HOSTJIT_GRAPH_DEVICE_UPDATES", m, 1);
    loops.push_back(std::make_unique<DecodeLoop>(k, checked));
    unsetenv("HOSTJIT_GRAPH_DEVICE_UPDATES");
    if (!loops.back()->error.empty()) return state.SkipWithError(loops.back()->error.c_str());
  }
  std::vector<std::vector<double>> us(3);
  std::vector<uint64_t> builds(3, 0), device(3, 0);
  size_t round = 0;
  for (auto _ : state) {
    double total = 0;
    for (size_t j = 0; j < 3; ++j) {
      size_t m = (round + j) % 3;
      hj_stats before = loops[m]->s.rt->stats();
      double t = 0;
      if (loops[m]->pass(checked ? 3 : 1, &t)) return state.SkipWithError(hj_last_error());
      hj_stats after = loops[m]->s.rt->stats();
      builds[m] += after.graph_builds - before.graph_builds;
      device[m] += after.graph_device_updates - before.graph_device_updates;
      us[m].push_back(t * 1e6);
      total += t;
    }
    state.SetIterationTime(total);
    ++round;
  }
  const char *names[] = {"auto", "device", "host"};
  for (size_t m = 0; m < 3; ++m) {
    std::sort(us[m].begin(), us[m].end());
    state.counters[std::string(names[m]) + "_us"] = us[m].empty() ? -1 : us[m][us[m].size() / 2];
    state.counters[std::string(names[m]) + "_builds"] = round ? static_cast<double>(builds[m]) / double(round) : 0;
    state.counters[std::string(names[m]) + "_at_launch"] = round ? static_cast<double>(device[m]) / double(round) : 0;
  }
  for (auto &l : loops) {
    l->release();
    finish(state, l->s);
  }
}

// The first call of a new signature in graph mode: the graphs are dropped
// before each (untimed), so every timed call traces, plans, builds,
// instantiates and launches.
void BM_GraphFirstCall(benchmark::State &state) {
  Setup s(static_cast<int>(state.range(0)));
  if (!s.error.empty()) return state.SkipWithError(s.error.c_str());
  hj_context *ctx = s.rt->context();
  for (auto _ : state) {
    hj_graph_clear(ctx);
    hj_synchronize(ctx);
    auto a = std::chrono::steady_clock::now();
    int32_t st = s.cp->callGraph(ctx, s.in(), nullptr, s.outData, s.outDims);
    auto b = std::chrono::steady_clock::now();
    if (st) return state.SkipWithError(hj_last_error());
    state.SetIterationTime(std::chrono::duration<double>(b - a).count());
    hj_free(ctx, s.outData[0]);
    hj_synchronize(ctx);
  }
  finish(state, s);
}

void launches(benchmark::internal::Benchmark *b) {
  b->ArgNames({"K"})->Arg(1)->Arg(4)->Arg(16)->Arg(64)->UseManualTime()->Unit(benchmark::kMicrosecond);
}

}  // namespace

BENCHMARK_CAPTURE(BM_Call, evaluator, kEval)->Apply(launches);
BENCHMARK_CAPTURE(BM_Call, jit, kJit)->Apply(launches);
BENCHMARK_CAPTURE(BM_Call, hand_written, kHand)->Apply(launches);
BENCHMARK_CAPTURE(BM_Driver, bare_launches, kBare)->Apply(launches);
BENCHMARK_CAPTURE(BM_Driver, hand_graph, kCaptured)->Apply(launches);
BENCHMARK_CAPTURE(BM_Driver, hand_graph_nodes, kNodes)->Apply(launches);
BENCHMARK_CAPTURE(BM_Call, graph_same_addresses, kGraphSame)->Apply(launches);
BENCHMARK_CAPTURE(BM_Call, graph_fresh_addresses, kGraphFresh)->Apply(launches);
BENCHMARK_CAPTURE(BM_Call, graph_same_addresses_profiled, kGraphSameProfiled)->Apply(launches);
BENCHMARK(BM_GraphFirstCall)->Apply(launches)->Iterations(50);
BENCHMARK(BM_Interleaved)->ArgNames({"K"})->Arg(16)->Arg(64)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_InterleavedModel)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ShapeCycle)->Apply(shapeCycles);
BENCHMARK(BM_ShapeCycleChecked)
    ->ArgNames({"K", "D", "growing", "rows", "cache"})
    ->Args({16, 1000, 0, 1, 0})
    ->Args({16, 1000, 1, 1, 0})
    ->Args({64, 1000, 0, 1, 0})
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ShapeUpdate)
    ->ArgNames({"K", "device"})
    ->ArgsProduct({{4, 16, 64}, {0, 1}})
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_DecodePass)
    ->ArgNames({"K", "way"})
    ->ArgsProduct({{16, 64}, {0, 1, 2, 3}})
    ->Iterations(5)  // a pass is 1000 calls: the manual time per call would take thousands of passes
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_DecodeModes)
    ->ArgNames({"K", "checked"})
    ->ArgsProduct({{16, 64}, {0, 1}})
    ->Iterations(7)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ManyInputs)->ArgNames({"M"})->Arg(1)->Arg(16)->Arg(64)->Arg(150)->Arg(300)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ManyInputsRun)
    ->ArgNames({"M", "jit"})
    ->ArgsProduct({{1, 16, 64, 150, 300}, {1, 0}})
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

int main(int argc, char **argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  gJit = std::move(*Jit::create());
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  gJit.reset();
  return 0;
}
