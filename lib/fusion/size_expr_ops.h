// size_expr_ops.h - a SizeExpr built as Host IR scalar operations, each
// operation once per program: the fusion lowering and the Inductor import
// both build their sizes, grids and kernel scalars this way.
#pragma once

#include <functional>
#include <map>
#include <set>
#include <string>

#include "hostjit/fusion/fusion.h"

namespace hostjit {

class SizeExprOps {
 public:
  // What the names of an expression are: the tensor a size(x, d) or
  // stride(x, d) reads, and the value a scalar name stands for (an input,
  // or, in an Inductor program, a size symbol built first).
  struct Names {
    std::function<ValueId(const std::string &)> tensor;
    std::function<Operand(const std::string &)> scalar;
  };

  explicit SizeExprOps(ProgramBuilder &b) : b_(b) {}

  // The operand of e: a literal when its literals fold, else the value of
  // the operation that computes it, built the first time it is asked for
  // (named `name`, or name_1, ...; `origin` goes to its statement).
  Operand build(const SizeExpr &e, const std::string &name, const std::string &origin, const Names &names);

  // A value name not used yet: want, else want_1, want_2, ...
  std::string fresh(const std::string &want);
  // Marks a name used (one the program has, or will have).
  void reserve(const std::string &name) { used_.insert(name); }

 private:
  Operand memoOp(const std::string &key, const std::string &name, const std::string &origin, OpCode op, Operand a,
                 Operand b, Operand c = Operand::integer(0));

  ProgramBuilder &b_;
  std::map<std::string, ValueId> memo_;  // "op a, b" -> the value that computes it
  std::set<std::string> used_;
};

}  // namespace hostjit
