// inductor.h - a program Inductor compiled for one torch.compile graph, as
// recorded where PyTorch runs (docs/inductor.md), imported as one Host IR
// program: its Triton kernels by the exact variant each launch used, its
// extern matmuls as matmul statements, its buffers and views
// (reinterpret_tensor, with offsets), in-place buffers and written inputs,
// all sized by expressions over the inputs' sizes and size symbols, and
// each buffer freed after its last use.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "hostjit/fusion/fusion.h"
#include "hostjit/ir/error.h"
#include "hostjit/ir/ir.h"

namespace hostjit {

// Output k of the Inductor call: result `index` of the program (a buffer)
// or, with fromInput, its tensor input `index`, seen through sizes,
// strides and an offset in elements (expressions over the program's
// inputs: a torch caller makes the tensor with as_strided).
struct InductorOutput {
  bool fromInput = false;
  uint32_t index = 0;
  std::vector<SizeExpr> sizes, strides;
  SizeExpr offset = SizeExpr::integer(0);
};

struct InductorImport {
  Program program;
  std::vector<InductorOutput> outputs;
};

// Imports a description (JSON text of file `file`, whose directory its
// relative paths start from). Errors name the JSON path: a field missing
// or mistyped, a kernel whose compiled variant is missing or unreadable,
// an extern kernel hostjit does not map (with its name and where it
// stands), a tensor used before it is made, a symbol no input determines,
// and anything the verifier refuses in what it built.
Expected<InductorImport> importInductor(std::string_view text, const std::string &file);
Expected<InductorImport> loadInductor(const std::string &path);

// Whether a file is an Inductor description: its name ends in ".inductor.json".
bool isInductorFile(const std::string &path);

// The outputs as comment lines for the printed program ("// output 0:
// result 0 as [s0, 64] strides [64, 1] offset 0").
std::string describeOutputs(const InductorImport &imported);

}  // namespace hostjit
