// plan_geometry.h - where a tensor's elements lie, as expressions of a
// program's table: its sizes and strides, its offset into its root, the
// elements it spans. makePlan uses them for matmul operands, views'
// offsets and the run-time check that a view stays inside its root.
#pragma once

#include <vector>

#include "hostjit/ir/ir.h"

namespace hostjit {

class TensorGeometry {
 public:
  TensorGeometry(const Program &p, ExprTable &table) : p_(p), table_(table) {}

  // A tensor's sizes and strides (in elements): a view's or a buffer's as
  // written (contiguous without strides), an input's as the caller gives
  // them.
  void dimsOf(ValueId id, std::vector<ExprId> &sizes, std::vector<ExprId> &strides) const;

  // The elements a tensor starts past its root's first, its views' offsets
  // added along the chain: invalid when they are all 0.
  ExprId offsetElements(ValueId id) const;

  // The elements from a tensor's first to its last, as its sizes and
  // strides reach: 0 when a size is 0; invalid when constants overflow.
  ExprId span(const std::vector<ExprId> &sizes, const std::vector<ExprId> &strides) const;

 private:
  const Program &p_;
  ExprTable &table_;
};

}  // namespace hostjit
