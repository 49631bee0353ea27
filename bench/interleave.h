// interleave.h - several ways of issuing one program, interleaved batch by
// batch in one benchmark run.
#pragma once

#include <benchmark/benchmark.h>

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "hostjit/runtime.h"

namespace hostjit::bench {

// A way of issuing one call: its name in the counters, and the call, which
// returns an hj_status (and frees what it returns).
using Way = std::pair<std::string, std::function<int32_t()>>;

// Runs each way once (warm: kernels, pool, graphs), then per benchmark
// iteration one batch of `batch` calls of every way, the order rotating by
// one each round so that the machine's drift hits all ways alike; ctx is
// synchronised after each batch, outside the timing. Sets, per way, the
// counters NAME_us (median over rounds of host µs per call), NAME_instr and
// NAME_cycles (median user-space instructions and cycles per call, counted
// with perf_event_open; -1 where the kernel does not allow it). The
// iteration time is the sum of the batches.
void interleave(benchmark::State &state, hj_context *ctx, int batch, const std::vector<Way> &ways);

}  // namespace hostjit::bench
