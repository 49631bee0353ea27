// programs.h - the programs the benchmarks run: N segments, each an
// intermediate, a zeroed semaphore and a launch of the empty host kernel.
#pragma once

#include <string>

namespace hostjit::bench {

// Text of a program with `segments` launches; every segment allocates a work
// buffer and a zero_init resets_to_zero semaphore, launches, and frees both
// (5 runtime calls), around one output allocated first.
std::string segmentedProgram(int segments);

}  // namespace hostjit::bench

namespace hostjit::bench {

// Text of a program with `launches` launches of the empty host kernel, each
// with its own intermediate and every fourth with a zero_init
// resets_to_zero semaphore (the compile-time and graph benchmarks' shape).
// With cudaSource (a path to bench/kernels/steps.cu), the kernels have CUDA
// implementations too.
std::string launchProgram(int launches, const std::string &cudaSource = "");

}  // namespace hostjit::bench
