// inductor_importer.h - the importer of a recorded Inductor program
// (internal to lib/fusion): its inputs, symbols and kernels and the body's
// allocations, views and launches (inductor.cpp), extern matmuls
// (inductor_extern.cpp), outputs and buffer lifetimes
// (inductor_outputs.cpp).
#pragma once

#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "hostjit/fusion/inductor.h"
#include "hostjit/fusion/triton.h"
#include "hostjit/ir/ir.h"
#include "json_fields.h"
#include "size_expr_ops.h"

namespace hostjit::inductor_import {

// A tensor of the program: its value, and its sizes and strides as the
// description gives them (strides empty: contiguous).
struct Tensor {
  ValueId value;
  DType dtype = DType::f32;
  std::vector<SizeExpr> sizes, strides;
  std::string root;                        // the input or buffer whose memory it is
  bool input = false;                      // root is a tensor input
  SizeExpr offset = SizeExpr::integer(0);  // elements from the root's first (its views' offsets)
};

// A kernel of the description: its declaration and the variant's launch.
struct TritonUse {
  KernelId id;
  TritonKernel k;
  bool declared = false;
};

// One description imported: run() builds the program, statement by
// statement, and raises BadField naming the JSON path of a bad field.
class Importer : public JsonFields {
 public:
  Importer(std::string file) : file_(std::move(file)), dir_(std::filesystem::path(file_).parent_path()) {}

  InductorImport run(const json &j);

 private:
  // ---- inputs, symbols, kernels ------------------------------------------

  void input(const json &j, const std::string &path);
  void symbols(const json &j);
  void kernel(const json &j, const std::string &path);

  // ---- the body ----------------------------------------------------------

  void step(const json &j, const std::string &path);
  void alloc(const json &j, const std::string &path);
  void view(const json &j, const std::string &path);
  void launch(const json &j, const std::string &path);

  // The kernel's declaration, made at its first launch (its parameter
  // dtypes are then known).
  KernelId declare(const std::string &name, TritonUse &use, const std::vector<ParamType> &params,
                   const std::string &path);

  // extern_kernels.mm / addmm / bmm / baddbmm as a matmul statement.
  void externCall(const json &j, const std::string &path);

  // A bias added to every row: a vector, or a matrix (batch) whose row and
  // batch strides are 0 (one row expanded), as a vector.
  ValueId biasRow(const Tensor &t, const std::string &path, const std::string &kname);

  // A matmul operand whose rows are contiguous (last stride 1) as it is; one
  // whose columns are (stride 1 before the last) as a view of its
  // transpose, with *transposed set.
  Operand rowMajor(const Tensor &t, const std::string &path, bool *transposed);

  // ---- outputs and lifetimes --------------------------------------------

  void outputs(const json &outs);

  // Each buffer is freed after the last step that uses it or a view of it,
  // unless an output is in it.
  void lastUse(const json &body, const json &outs, const std::set<size_t> &dropped);
  void freeAfter(size_t i);

  // ---- helpers -----------------------------------------------------------

  const Tensor &tensor(const std::string &name, const std::string &path) const;
  void newName(const std::string &name, const std::string &path);
  uint32_t tensorInputIndex(const std::string &name);
  static bool isLiteral(const SizeExpr &e, int64_t v) { return e.kind() == SizeExpr::Kind::Int && e.intValue() == v; }
  static SizeExpr times(const SizeExpr &a, const SizeExpr &b);
  static std::string show(const std::vector<SizeExpr> &v);
  static std::vector<SizeExpr> contiguousStrides(const std::vector<SizeExpr> &sizes);

  // An input the description gives other strides than contiguous ones (a
  // slice Dynamo passes, its row stride a symbol), as a view with those
  // strides: a kernel indexes it with the strides Inductor passes it, so
  // it takes its data pointer without asking it to be contiguous. Made at
  // its first use by a kernel, once.
  ValueId stridedInput(const Tensor &t, const std::string &path);

  // Whether the description's strides are the contiguous ones (or absent).
  static bool contiguous(const Tensor &t);
  std::pair<std::vector<Operand>, std::vector<Operand>> shape(const Tensor &t, const std::string &name,
                                                              const std::string &path);

  // An expression's operand: symbols stand for their definitions, scalar
  // inputs for themselves, size(t, d) and stride(t, d) for any tensor.
  Operand build(const SizeExpr &e, const std::string &name, const std::string &path);
  void origin(const std::string &path) { b_.program().body.back().origin = file_ + ": " + path; }

  std::string file_;
  std::filesystem::path dir_;
  ProgramBuilder b_;
  SizeExprOps ops_{b_};
  std::set<std::string> names_, building_;
  std::map<std::string, Tensor> tensors_;
  std::map<std::string, ValueId> strided_;  // an input -> its view with the description's strides
  std::map<std::string, ValueId> scalars_;
  std::map<std::string, SizeExpr> symbols_;
  std::map<std::string, Operand> built_;
  std::map<std::string, TritonUse> kernels_;
  std::map<std::string, std::string> host_;
  std::map<size_t, std::vector<std::string>> freeAt_;
  std::vector<InductorOutput> outputs_;
};

}  // namespace hostjit::inductor_import
