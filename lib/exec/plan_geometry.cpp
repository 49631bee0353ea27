// plan_geometry.cpp - where a tensor's elements lie, as plan expressions.
#include "plan_geometry.h"

namespace hostjit {

ExprId TensorGeometry::offsetElements(ValueId id) const {
  ExprId elements;
  for (ValueId v = id;;) {
    const Value &val = p_.value(v);
    const auto *vw = val.def == Value::Def::Stmt && val.defIndex < p_.body.size()
                         ? std::get_if<View>(&p_.body[val.defIndex].node)
                         : nullptr;
    if (!vw) break;
    if (vw->offset.isValue() || vw->offset.i != 0) {
      ExprId o = vw->offset.isValue() ? p_.value(vw->offset.value).expr : table_.constInt(vw->offset.i);
      elements = elements.valid() ? table_.binary(OpCode::Add, elements, o, nullptr) : o;
    }
    v = vw->base.value;
  }
  return elements;
}

void TensorGeometry::dimsOf(ValueId id, std::vector<ExprId> &sizes, std::vector<ExprId> &strides) const {
  const Value &v = p_.value(id);
  sizes.clear();
  strides.clear();
  if (v.def == Value::Def::TensorInput) {
    for (uint32_t d = 0; d < v.rank; ++d) {
      sizes.push_back(v.inputDims[d] == kDynamic ? table_.inputSize(v.defIndex, d) : table_.constInt(v.inputDims[d]));
      strides.push_back(table_.inputStride(v.defIndex, d));
    }
    return;
  }
  const auto *view = std::get_if<View>(&p_.body[v.defIndex].node);
  const std::vector<Operand> &extents = view ? view->extents : p_.allocOf(id)->extents;
  const std::vector<Operand> &given = view ? view->strides : p_.allocOf(id)->strides;
  auto expr = [&](const Operand &e) { return e.isValue() ? p_.value(e.value).expr : table_.constInt(e.i); };
  for (const Operand &e : extents) sizes.push_back(expr(e));
  for (const Operand &e : given) strides.push_back(expr(e));
  if (given.empty()) {
    strides.assign(sizes.size(), table_.constInt(1));
    for (size_t d = sizes.size(); d-- > 1;) strides[d - 1] = table_.binary(OpCode::Mul, strides[d], sizes[d], nullptr);
  }
}

ExprId TensorGeometry::span(const std::vector<ExprId> &sizes, const std::vector<ExprId> &strides) const {
  ExprId zero = table_.constInt(0), one = table_.constInt(1), last = zero, smallest = one;
  auto bin = [&](OpCode op, ExprId a, ExprId b) {
    return a.valid() && b.valid() ? table_.binary(op, a, b, nullptr) : ExprId{};
  };
  for (size_t d = 0; d < sizes.size(); ++d) {
    last = bin(OpCode::Add, last, bin(OpCode::Mul, bin(OpCode::Sub, sizes[d], one), strides[d]));
    smallest = d ? bin(OpCode::Min, smallest, sizes[d]) : sizes[d];
    if (!last.valid() || !smallest.valid()) return {};  // a constant overflow
  }
  ExprId end = bin(OpCode::Add, last, one);
  return end.valid() ? table_.select(table_.binary(OpCode::Eq, smallest, zero, nullptr), zero, end) : end;
}

}  // namespace hostjit
