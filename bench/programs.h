// programs.h - the programs the benchmarks run: N segments, each an
// intermediate, a zeroed semaphore and a launch of the empty host kernel.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

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
// `perBlock` elements of x per block of the grid (256: a block per row of
// x; more: a grid that grows only every perBlock / 256 rows).
// boundsChecked: the kernels are declared bounds_checked (their grids may be
// rounded up in graph mode; the empty kernels do nothing in any block).
std::string launchProgram(int launches, const std::string &cudaSource = "", int64_t perBlock = 256,
                          bool boundsChecked = false);

}  // namespace hostjit::bench

namespace hostjit::bench {

// Text of a GPT-2-shaped forward pass of `layers` blocks written with plain
// kernels (bench/kernels/model.cu: int sizes made with to_i32, the attention
// scale with rsqrt): 14 launches and 20 allocations a block, 3 launches
// around them; inputs %tokens: i32[B, T], %wte: f32[V, C], %wpe, 12 weights
// a block, the final layer norm's and %nh: i64 heads. Kernels are the empty
// host kernel, and with cudaSource (a path to model.cu) the empty CUDA ones.
std::string modelProgram(int layers, const std::string &cudaSource = "");
// Input shapes for it: GPT-2 small's structure at a small width (B 4, T 64,
// C 128, V 512; pass %nh = 4); the host's cost does not depend on sizes.
std::map<std::string, std::vector<int64_t>> modelShapes(int layers);

}  // namespace hostjit::bench

namespace hostjit::bench {

// Text of a program of 16 launches over `inputs` tensor inputs
// %w0 ... (f32[64] each) that never move: each launch takes an output and
// twenty of the inputs, in turn, so every input is passed (a model's
// weights). Kernels as launchProgram's (touch20 in steps.cu).
std::string manyInputsProgram(int inputs, const std::string &cudaSource = "");

}  // namespace hostjit::bench
