// bench_spmd.cpp - SPMD programs on two GPUs (a thread and a context per
// rank, NCCL underneath): all-reduce, all-gather and reduce-scatter bus
// bandwidth through a hostjit program against NCCL called directly, host
// microseconds per call of the scenarios, and the all-gather + matmul with
// its second stream against the same loop on one stream; each eagerly and
// in graph mode. Each benchmark runs a fixed number of iterations on rank 0
// (the benchmark thread) while rank 1 makes the same calls in a thread.
//
//   NCCL_NVLS_ENABLE=0 HOSTJIT_SOURCE_DIR=$PWD LD_LIBRARY_PATH=<libnccl dir> hostjit_spmd_bench
#include <benchmark/benchmark.h>
#include <cuda.h>  // types and prototypes only: the driver is loaded with dlopen
#include <dlfcn.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <thread>

#include "hostjit/exec/host_data.h"
#include "hostjit/jit.h"
#include "hostjit/text/text.h"

using namespace hostjit;

namespace {

std::string sourceDir() {
  const char *d = std::getenv("HOSTJIT_SOURCE_DIR");
  return d && *d ? d : HOSTJIT_SOURCE_DIR;
}

// NCCL called directly, for the comparison (the bench's own dlopen; the
// types as in nccl.h).
struct RawNccl {
  using Comm = void *;
  struct Id {
    char internal[128];
  };
  int (*getUniqueId)(Id *) = nullptr;
  int (*commInitRank)(Comm *, int, Id, int) = nullptr;
  int (*commDestroy)(Comm) = nullptr;
  int (*allReduce)(const void *, void *, size_t, int, int, Comm, void *) = nullptr;
  int (*allGather)(const void *, void *, size_t, int, Comm, void *) = nullptr;
  int (*reduceScatter)(const void *, void *, size_t, int, int, Comm, void *) = nullptr;
  CUresult (*ctxSetCurrent)(CUcontext) = nullptr;
  CUresult (*primaryCtxRetain)(CUcontext *, CUdevice) = nullptr;
  bool ok = false;
  RawNccl() {
    void *n = dlopen("libnccl.so.2", RTLD_NOW), *c = dlopen("libcuda.so.1", RTLD_NOW);
    if (!n || !c) return;
    getUniqueId = reinterpret_cast<decltype(getUniqueId)>(dlsym(n, "ncclGetUniqueId"));
    commInitRank = reinterpret_cast<decltype(commInitRank)>(dlsym(n, "ncclCommInitRank"));
    commDestroy = reinterpret_cast<decltype(commDestroy)>(dlsym(n, "ncclCommDestroy"));
    allReduce = reinterpret_cast<decltype(allReduce)>(dlsym(n, "ncclAllReduce"));
    allGather = reinterpret_cast<decltype(allGather)>(dlsym(n, "ncclAllGather"));
    reduceScatter = reinterpret_cast<decltype(reduceScatter)>(dlsym(n, "ncclReduceScatter"));
    ctxSetCurrent = reinterpret_cast<decltype(ctxSetCurrent)>(dlsym(c, "cuCtxSetCurrent"));
    primaryCtxRetain = reinterpret_cast<decltype(primaryCtxRetain)>(dlsym(c, "cuDevicePrimaryCtxRetain"));
    ok = getUniqueId && commInitRank && commDestroy && allReduce && allGather && reduceScatter && ctxSetCurrent &&
         primaryCtxRetain;
  }
};

// Every setup of the run, destroyed before main returns: NCCL's own exit
// handlers must not run while communicators are still alive.
std::map<std::string, std::unique_ptr<struct TwoRanks>> &setups() {
  static std::map<std::string, std::unique_ptr<TwoRanks>> m;
  return m;
}

Jit &jit() {
  static std::unique_ptr<Jit> j = std::move(*Jit::create());
  return *j;
}

// Two ranks of one program: runtimes on devices 0 and 1 in one communicator,
// the program compiled for each (eager or graph mode), and each rank's inputs.
struct TwoRanks {
  std::shared_ptr<Runtime> rt[2];
  std::unique_ptr<CompiledProgram> cp[2];
  std::optional<InputSet> in[2];
  std::vector<ScalarArg> scalars;
  std::string error;

  TwoRanks(const std::string &file, const std::map<std::string, std::vector<int64_t>> &shapes,
           std::vector<ScalarArg> sc = {}, bool graph = false)
      : scalars(std::move(sc)) {
    Diagnostics d;
    Program p = parseFile(file, d);
    if (!d.empty()) {
      error = d.format(file, p.source);
      return;
    }
    hj_comm_id id;
    if (hj_comm_unique_id(HJ_BACKEND_CUDA, &id) != HJ_OK) {
      error = hj_last_error();
      return;
    }
    std::string errs[2];
    std::thread t[2];
    for (int r = 0; r < 2; ++r)
      t[r] = std::thread([&, r] {
        hj_options o;
        hj_options_init(&o);
        o.backend = HJ_BACKEND_CUDA;
        o.device = r;
        auto made = Runtime::create(o);
        if (!made) {
          errs[r] = made.error().message;
          return;
        }
        rt[r] = *made;
        if (hj_comm_init(rt[r]->context(), &id, 2, r) != HJ_OK) errs[r] = hj_last_error();
      });
    for (auto &th : t) th.join();
    for (int r = 0; r < 2 && error.empty(); ++r) {
      if (!errs[r].empty()) {
        error = errs[r];
        return;
      }
      CompileOptions co;
      co.tiered = false;
      auto c = jit().compile(p, rt[r], co);
      if (!c) {
        error = c.error().message;
        return;
      }
      cp[r] = std::move(*c);
      cp[r]->setGraphMode(graph);
      auto s = InputSet::random(rt[r], cp[r]->plan(), shapes, 7 + r);
      if (!s) {
        error = s.error().message;
        return;
      }
      in[r].emplace(std::move(*s));
    }
  }

  // One call on rank r; sync: wait for its GPU work too.
  bool call(int r, bool sync) {
    auto out = cp[r]->run(in[r]->span(), scalars);
    if (!out) return false;
    return !sync || hj_synchronize(rt[r]->context()) == HJ_OK;
  }
};

// Runs `iters` iterations on both ranks; rank 0's are timed by `timed`.
void lockstep(benchmark::State &state, int iters, const std::function<bool(int)> &step,
              const std::function<bool(benchmark::State &)> &timed) {
  bool other = true;
  std::thread rank1([&] {
    for (int i = 0; i < iters + 2 && other; ++i) other = step(1);
  });
  bool ok = step(0) && step(0);  // warm up, as rank 1 does
  for (auto _ : state) {
    if (ok) ok = timed(state);
  }
  rank1.join();
  if (!ok || !other) state.SkipWithError(hj_last_error());
}

double seconds(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

const char *modeName(int64_t graph) { return graph ? "graph" : "eager"; }

// The collectives compared with NCCL. `bytes` is the size nccl-tests
// reports: the buffer of an all-reduce, the gathered buffer of an
// all-gather, the buffer a reduce-scatter reduces; bus bandwidth is bytes /
// time times `factor` (2(n-1)/n, (n-1)/n, (n-1)/n for n = 2 ranks).
enum class Coll { AllReduce, AllGather, ReduceScatter };

struct CollInfo {
  const char *program;
  double factor;
};

CollInfo collInfo(Coll c) {
  switch (c) {
    case Coll::AllReduce: return {"/bench/programs/all_reduce.hir", 1.0};
    case Coll::AllGather: return {"/bench/programs/all_gather.hir", 0.5};
    case Coll::ReduceScatter: return {"/bench/programs/reduce_scatter.hir", 0.5};
  }
  return {"", 0};
}

// Elements of each rank's input for `bytes` of collective c on 2 ranks.
int64_t inputElems(Coll c, int64_t bytes) { return (c == Coll::AllGather ? bytes / 2 : bytes) / 4; }

// One collective of `bytes` through a hostjit program of one statement,
// eagerly or in graph mode (range 1): time per operation with the GPU work,
// and NCCL's bus bandwidth formula.
void collectiveHostjit(benchmark::State &state, Coll c) {
  int64_t bytes = state.range(0);
  bool graph = state.range(1) != 0;
  state.SetLabel(modeName(graph));
  CollInfo info = collInfo(c);
  auto &s = setups()[std::string(info.program) + " " + std::to_string(bytes) + modeName(graph)];
  if (!s) s = std::make_unique<TwoRanks>(sourceDir() + info.program,
                                         std::map<std::string, std::vector<int64_t>>{{"x", {inputElems(c, bytes)}}},
                                         std::vector<ScalarArg>{}, graph);
  if (!s->error.empty()) return state.SkipWithError(s->error.c_str());
  int iters = static_cast<int>(state.max_iterations);
  lockstep(state, iters, [&](int r) { return s->call(r, true); }, [&](benchmark::State &st) {
    auto a = std::chrono::steady_clock::now();
    bool ok = s->call(0, true);
    st.SetIterationTime(seconds(a, std::chrono::steady_clock::now()));
    return ok;
  });
  state.counters["busbw_GBps"] = benchmark::Counter(static_cast<double>(bytes) * info.factor / 1e9,
                                                    benchmark::Counter::kIsIterationInvariantRate);
}

// The same collective with NCCL called directly on two comms of its own, on
// buffers of the same sizes and the streams of the same contexts.
void collectiveNccl(benchmark::State &state, Coll c) {
  static RawNccl nccl;
  if (!nccl.ok) return state.SkipWithError("libnccl.so.2 or libcuda.so.1 cannot be loaded");
  size_t bytes = static_cast<size_t>(state.range(0));
  auto &s = setups()["nccl " + std::to_string(bytes)];
  if (!s) s = std::make_unique<TwoRanks>(sourceDir() + "/bench/programs/all_reduce.hir",
                                         std::map<std::string, std::vector<int64_t>>{{"x", {int64_t(bytes / 4)}}});
  if (!s->error.empty()) return state.SkipWithError(s->error.c_str());
  static RawNccl::Comm comm[2];
  static CUcontext ctx[2];
  static bool made = false;
  if (!made) {
    RawNccl::Id id;
    nccl.getUniqueId(&id);
    std::thread t[2];
    for (int r = 0; r < 2; ++r)
      t[r] = std::thread([&, r] {
        nccl.primaryCtxRetain(&ctx[r], r);
        nccl.ctxSetCurrent(ctx[r]);
        nccl.commInitRank(&comm[r], 2, id, r);
      });
    for (auto &th : t) th.join();
    made = true;
  }
  void *buf[2][2] = {};
  for (int r = 0; r < 2; ++r)
    for (int b = 0; b < 2; ++b) hj_buffer_alloc(s->rt[r]->context(), bytes, &buf[r][b]);
  auto step = [&](int r) {
    nccl.ctxSetCurrent(ctx[r]);
    void *stream = hj_context_native_stream(s->rt[r]->context());
    size_t elems = bytes / 4;
    int st = c == Coll::AllReduce ? nccl.allReduce(buf[r][0], buf[r][1], elems, 7 /* float32 */, 0 /* sum */, comm[r], stream)
             : c == Coll::AllGather ? nccl.allGather(buf[r][0], buf[r][1], elems / 2, 7, comm[r], stream)
                                    : nccl.reduceScatter(buf[r][0], buf[r][1], elems / 2, 7, 0, comm[r], stream);
    if (st) return false;
    return hj_synchronize(s->rt[r]->context()) == HJ_OK;
  };
  lockstep(state, static_cast<int>(state.max_iterations), step, [&](benchmark::State &st) {
    auto a = std::chrono::steady_clock::now();
    bool ok = step(0);
    st.SetIterationTime(seconds(a, std::chrono::steady_clock::now()));
    return ok;
  });
  for (int r = 0; r < 2; ++r)
    for (int b = 0; b < 2; ++b) hj_buffer_free(s->rt[r]->context(), buf[r][b]);
  state.counters["busbw_GBps"] = benchmark::Counter(static_cast<double>(bytes) * collInfo(c).factor / 1e9,
                                                    benchmark::Counter::kIsIterationInvariantRate);
}

void BM_AllReduceHostjit(benchmark::State &state) { collectiveHostjit(state, Coll::AllReduce); }
void BM_AllGatherHostjit(benchmark::State &state) { collectiveHostjit(state, Coll::AllGather); }
void BM_ReduceScatterHostjit(benchmark::State &state) { collectiveHostjit(state, Coll::ReduceScatter); }
void BM_AllReduceNccl(benchmark::State &state) { collectiveNccl(state, Coll::AllReduce); }
void BM_AllGatherNccl(benchmark::State &state) { collectiveNccl(state, Coll::AllGather); }
void BM_ReduceScatterNccl(benchmark::State &state) { collectiveNccl(state, Coll::ReduceScatter); }

// Host microseconds per call of a scenario, eagerly or in graph mode (range
// 0): the call as issued; the GPU work is waited for outside the timing.
void scenarioHost(benchmark::State &state, const std::string &file,
                  const std::map<std::string, std::vector<int64_t>> &shapes, std::vector<ScalarArg> scalars) {
  bool graph = state.range(0) != 0;
  state.SetLabel(modeName(graph));
  auto &s = setups()["host " + file + modeName(graph)];
  if (!s) s = std::make_unique<TwoRanks>(sourceDir() + file, shapes, scalars, graph);
  if (!s->error.empty()) return state.SkipWithError(s->error.c_str());
  uint64_t updates = s->rt[0]->stats().graph_updates;
  lockstep(state, static_cast<int>(state.max_iterations), [&](int r) { return s->call(r, true); },
           [&](benchmark::State &st) {
             auto a = std::chrono::steady_clock::now();
             bool ok = s->call(0, false);
             st.SetIterationTime(seconds(a, std::chrono::steady_clock::now()));
             return ok && hj_synchronize(s->rt[0]->context()) == HJ_OK;
           });
  // Graph nodes given new arguments per call (0 when outputs come back where they were).
  state.counters["node_updates"] = benchmark::Counter(static_cast<double>(s->rt[0]->stats().graph_updates - updates),
                                                      benchmark::Counter::kAvgIterations);
}

// GPU time per call (the call and its work) of the all-gather + matmul with
// its comm stream, or of the same loop on one stream (serial); eagerly or in
// graph mode (range 0).
void gatherMatmulGpu(benchmark::State &state, const std::string &file) {
  bool graph = state.range(0) != 0;
  state.SetLabel(modeName(graph));
  auto &s = setups()["gpu " + file + modeName(graph)];
  if (!s)
    s = std::make_unique<TwoRanks>(sourceDir() + file,
                                   std::map<std::string, std::vector<int64_t>>{{"x", {4096, 8192}}, {"w", {8192, 8}}},
                                   std::vector<ScalarArg>{ScalarArg::i64(8)}, graph);
  if (!s->error.empty()) return state.SkipWithError(s->error.c_str());
  lockstep(state, static_cast<int>(state.max_iterations), [&](int r) { return s->call(r, true); },
           [&](benchmark::State &st) {
             auto a = std::chrono::steady_clock::now();
             bool ok = s->call(0, true);
             st.SetIterationTime(seconds(a, std::chrono::steady_clock::now()));
             return ok;
           });
}

void BM_RowParallelHost(benchmark::State &state) {
  scenarioHost(state, "/test/programs/spmd/row_parallel.hir", {{"x", {256, 512}}, {"w", {512, 256}}}, {});
}
void BM_CollectivesHost(benchmark::State &state) {
  scenarioHost(state, "/test/programs/spmd/collectives.hir", {{"x", {4096}}}, {});
}
void BM_GatherMatmulHost(benchmark::State &state) {
  scenarioHost(state, "/test/programs/spmd/gather_matmul.hir", {{"x", {4096, 8192}}, {"w", {8192, 8}}},
               {ScalarArg::i64(8)});
}
void BM_GatherMatmulOverlap(benchmark::State &state) { gatherMatmulGpu(state, "/test/programs/spmd/gather_matmul.hir"); }
void BM_GatherMatmulSerial(benchmark::State &state) { gatherMatmulGpu(state, "/bench/programs/gather_matmul_serial.hir"); }

}  // namespace

#define HJ_COLLECTIVE_BENCH(name)                                                                              \
  BENCHMARK(BM_##name##Hostjit)                                                                                \
      ->ArgsProduct({benchmark::CreateRange(8 << 10, 256 << 20, 8), {0, 1}})                                   \
      ->Iterations(40)                                                                                         \
      ->UseManualTime()                                                                                        \
      ->Unit(benchmark::kMicrosecond);                                                                         \
  BENCHMARK(BM_##name##Nccl)->RangeMultiplier(8)->Range(8 << 10, 256 << 20)->Iterations(40)->UseManualTime()->Unit( \
      benchmark::kMicrosecond)
HJ_COLLECTIVE_BENCH(AllReduce);
HJ_COLLECTIVE_BENCH(AllGather);
HJ_COLLECTIVE_BENCH(ReduceScatter);
BENCHMARK(BM_RowParallelHost)->Arg(0)->Arg(1)->Iterations(300)->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_CollectivesHost)->Arg(0)->Arg(1)->Iterations(300)->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_GatherMatmulHost)->Arg(0)->Arg(1)->Iterations(100)->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_GatherMatmulOverlap)->Arg(0)->Arg(1)->Iterations(50)->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_GatherMatmulSerial)->Arg(0)->Arg(1)->Iterations(50)->UseManualTime()->Unit(benchmark::kMicrosecond);

int main(int argc, char **argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  setups().clear();
  return 0;
}
