// reference.h - plain reference computations of the examples, and the
// runs that check an example's output against them.
#pragma once

#include <string>
#include <vector>

#include "hostjit/exec/host_data.h"
#include "hostjit/exec/runtime_handles.h"

namespace hostjit::examples {

// One example: its program file, arguments for a given size, and a check.
struct ExampleCase {
  std::string name;  // one of exampleNames()
  std::string file;  // path of the .hir
  std::map<std::string, std::vector<int64_t>> shapes;
  std::vector<ScalarArg> scalars;
};

// The examples that run on one rank, by name: grid_sum, splitk, pipeline,
// loop, streams (spmd.hir runs on several: the CLI's --ranks).
const std::vector<std::string> &exampleNames();

// The cases of an example at a few sizes (not multiples of 256 included).
std::vector<ExampleCase> exampleCases(const std::string &examplesDir, const std::string &name);

// Compares outputs to the reference computed from the inputs' host data;
// returns "" when they agree (relative tolerance 1e-4), else what differs.
std::string checkExample(const ExampleCase &c, const InputSet &inputs, const std::vector<Tensor> &outputs);

std::vector<float> gridSumReference(const std::vector<float> &x);
std::vector<float> splitkReference(const std::vector<float> &a, const std::vector<float> &b, int64_t m, int64_t k,
                                   int64_t n);
std::vector<float> pipelineReference(const std::vector<float> &x, int64_t rows, int64_t cols, float alpha);
// loop.hir: y = x, then n times y = w * y + x.
std::vector<float> loopReference(const std::vector<float> &x, int64_t n, float w);
// streams.hir: y = alpha * x + beta * x.
std::vector<float> streamsReference(const std::vector<float> &x, float alpha, float beta);

}  // namespace hostjit::examples
