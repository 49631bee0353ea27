// cuda_bench.h - what the CUDA benchmarks share: a CUDA runtime with every
// debug mode off, and the timing of a batch of issued calls.
#pragma once

#include <benchmark/benchmark.h>

#include <chrono>
#include <memory>

#include "hostjit/exec/runtime_handles.h"

namespace hostjit::bench {

// A CUDA runtime with zero checks, NaN fills and zeroed-memory reuse off,
// and profiling as `profile` says, whatever the environment says.
inline Expected<std::shared_ptr<Runtime>> cudaBenchRuntime(bool profile = false) {
  hj_options o;
  hj_options_init(&o);
  o.backend = HJ_BACKEND_CUDA;
  o.check_zeroed = o.fill_nan = o.reuse_zeroed_memory = 0;
  o.profile = profile ? 1 : 0;
  return Runtime::create(o);
}

// Each iteration times `batch` calls of issue() being issued; the stream is
// drained after the batch, outside the timing. us_per_call: host time to
// issue one call.
template <class Fn>
void timeBatches(benchmark::State &state, Runtime &rt, int batch, Fn &&issue) {
  for (auto _ : state) {
    auto a = std::chrono::steady_clock::now();
    for (int i = 0; i < batch; ++i) issue();
    auto b = std::chrono::steady_clock::now();
    state.SetIterationTime(std::chrono::duration<double>(b - a).count());
    hj_synchronize(rt.context());
  }
  state.counters["us_per_call"] = benchmark::Counter(static_cast<double>(state.iterations()) * batch / 1e6,
                                                     benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

}  // namespace hostjit::bench
