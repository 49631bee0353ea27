// bench_gpu.cpp - host cost per call of each example on the CUDA backend
// (evaluator and JIT), against a bare cuLaunchKernel and hj_launch, in one
// run. Each iteration times a batch of calls being issued; the stream is
// synchronised after the batch, outside the timed region.
#include <benchmark/benchmark.h>
#include <dlfcn.h>

#include <cstdlib>

#include "hostjit/exec/evaluator.h"
#include "hostjit/exec/host_data.h"
#include "hostjit/jit.h"
#include "hostjit/text/text.h"
#include "cuda_bench.h"
#include "reference.h"

using namespace hostjit;

namespace {

constexpr int kBatch = 64;
std::unique_ptr<Jit> gJit;

std::shared_ptr<Runtime> cudaRuntime(bool profile) {
  auto rt = bench::cudaBenchRuntime(profile);
  return rt ? *rt : nullptr;
}

struct ExampleSetup {
  std::shared_ptr<Runtime> rt;
  examples::ExampleCase c;
  Program p;
  std::optional<Evaluator> ev;
  std::unique_ptr<CompiledProgram> cp;
  std::optional<InputSet> inputs;
  std::vector<hj_value> scalars;
  std::vector<void *> outData;
  std::vector<int64_t> outDims;
  std::string error;

  // profile: the runtime profiles (hj_options.profile).
  explicit ExampleSetup(const char *name, bool profile = false) : rt(cudaRuntime(profile)) {
    if (!rt) {
      error = hj_last_error();
      return;
    }
    const char *dir = std::getenv("HOSTJIT_EXAMPLES_DIR");
    c = examples::exampleCases(dir && *dir ? dir : HOSTJIT_EXAMPLES_DIR, name).back();
    Diagnostics d;
    p = parseFile(c.file, d);
    auto e = Evaluator::create(p, rt);
    if (!e) {
      error = e.error().message;
      return;
    }
    ev.emplace(std::move(*e));
    CompileOptions co;
    co.tiered = false;  // measure the native code from the first call
    auto j = gJit->compile(p, rt, co);
    if (!j) {
      error = j.error().message;
      return;
    }
    cp = std::move(*j);
    inputs.emplace(std::move(*InputSet::random(rt, ev->plan(), c.shapes, 1)));
    scalars.resize(c.scalars.size());
    packScalars(c.scalars, scalars.data());
    outData.resize(ev->plan().outputs.size());
    outDims.resize(outputDimSlots(ev->plan()) + 1);
  }
  void freeOutputs() {
    for (void *p : outData) hj_free(rt->context(), p);
  }
};

// mode 3: as 2, on a profiling runtime.
void BM_Example(benchmark::State &state, const char *name, int mode) {
  ExampleSetup s(name, mode == 3);
  if (!s.error.empty()) return state.SkipWithError(s.error.c_str());
  hj_context *ctx = s.rt->context();
  const DLTensor *const *in = s.inputs->pointers().data();
  switch (mode) {
    case 0:  // evaluator, raw call
      bench::timeBatches(state, *s.rt, kBatch, [&] {
        s.ev->call(ctx, in, s.scalars.data(), s.outData.data(), s.outDims.data());
        s.freeOutputs();
      });
      break;
    case 1:  // JIT, raw call
      bench::timeBatches(state, *s.rt, kBatch, [&] {
        s.cp->call(ctx, in, s.scalars.data(), s.outData.data(), s.outDims.data());
        s.freeOutputs();
      });
      break;
    case 2:  // JIT, checked arguments and owning outputs
    case 3:
      bench::timeBatches(state, *s.rt, kBatch, [&] { auto out = s.cp->run(s.inputs->span(), s.c.scalars); });
      break;
  }
  hj_stats st = s.rt->stats();
  state.counters["launches_per_call"] = static_cast<double>(st.launches) / static_cast<double>(state.iterations() * kBatch);
  state.counters["memsets_total"] = static_cast<double>(st.memsets);
}

// The floor: the grid_sum kernel launched with cuLaunchKernel directly, and
// through hj_launch, on the same stream with the same arguments; `how`:
// 0 bare, 1 hj_launch, 2 hj_launch on a profiling runtime, 3 hj_launch
// with NVTX ranges on (HOSTJIT_NVTX=1) and no tool attached.
void BM_Launch(benchmark::State &state, int how) {
  if (how == 3) setenv("HOSTJIT_NVTX", "1", 1);
  ExampleSetup s("grid_sum", how == 2);
  unsetenv("HOSTJIT_NVTX");
  bool bare = how == 0;
  if (!s.error.empty()) return state.SkipWithError(s.error.c_str());
  hj_context *ctx = s.rt->context();
  using LaunchFn = int (*)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void *,
                           void **, void **);
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  auto cuLaunch = lib ? reinterpret_cast<LaunchFn>(dlsym(lib, "cuLaunchKernel")) : nullptr;
  if (!cuLaunch) return state.SkipWithError("cuLaunchKernel not found");
  void *fn = nullptr;
  hj_kernel_table_native(s.cp->kernels(), 0, &fn);
  void *stream = hj_context_native_stream(ctx);
  const DLTensor *x = s.inputs->pointers()[0];
  int64_t total = x->shape[0] * x->shape[1], blocks = (total + 255) / 256;
  void *y, *work, *sem;
  int64_t one = 1;
  hj_alloc(ctx, &one, nullptr, 1, HJ_DTYPE_f32, 0, "y", &y);
  hj_alloc(ctx, &blocks, nullptr, 1, HJ_DTYPE_f32, 0, "work", &work);
  hj_alloc(ctx, &one, nullptr, 1, HJ_DTYPE_i32, HJ_ALLOC_ZERO_INIT | HJ_ALLOC_RESETS_TO_ZERO, "sem", &sem);
  void *xdata = x->data;
  void *params[] = {&xdata, &y, &work, &sem, &total};
  int64_t dims[7] = {blocks, 1, 1, 256, 1, 1, 0};
  if (bare)
    bench::timeBatches(state, *s.rt, kBatch, [&] { cuLaunch(fn, unsigned(blocks), 1, 1, 256, 1, 1, 0, stream, params, nullptr); });
  else
    bench::timeBatches(state, *s.rt, kBatch, [&] { hj_launch(ctx, s.cp->kernels(), 0, dims, params, nullptr); });
  hj_free(ctx, y);
  hj_free(ctx, work);
  hj_free(ctx, sem);
}

}  // namespace

BENCHMARK_CAPTURE(BM_Launch, bare_cuLaunchKernel, 0)->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Launch, hj_launch, 1)->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Launch, hj_launch_profiled, 2)->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Launch, hj_launch_nvtx_no_tool, 3)->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Example, grid_sum_eval, "grid_sum", 0)->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Example, grid_sum_jit, "grid_sum", 1)->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Example, grid_sum_jit_run, "grid_sum", 2)->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Example, grid_sum_jit_run_profiled, "grid_sum", 3)->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Example, splitk_eval, "splitk", 0)->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Example, splitk_jit, "splitk", 1)->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Example, splitk_jit_run, "splitk", 2)->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Example, pipeline_eval, "pipeline", 0)->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Example, pipeline_jit, "pipeline", 1)->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Example, pipeline_jit_run, "pipeline", 2)->UseManualTime()->Unit(benchmark::kMicrosecond);

int main(int argc, char **argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  gJit = std::move(*Jit::create());
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  gJit.reset();
  return 0;
}
