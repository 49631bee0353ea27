// program.cpp - questions about a Program (kernels by name, roots, loops,
// allocations) and the typing of operands and scalar operations.
#include "hostjit/ir/ir.h"

#include <cstring>

#include "hostjit/ir/error.h"
#include "hostjit/ir/scalar_semantics.h"

namespace hostjit {

std::optional<KernelId> Program::findKernel(std::string_view name) const {
  for (size_t i = 0; i < kernels.size(); ++i)
    if (kernels[i].name == name) return KernelId{static_cast<uint32_t>(i)};
  return std::nullopt;
}

ValueId Program::rootOf(ValueId v) const {
  for (int guard = 0; guard < 1 << 20; ++guard) {
    const Value &val = value(v);
    if (!val.isTensor || val.def != Value::Def::Stmt || val.defIndex >= body.size()) return v;
    const auto *view = std::get_if<View>(&body[val.defIndex].node);
    if (!view || !view->base.isValue() || view->base.value.index >= values.size() || view->base.value == v) return v;
    v = view->base.value;
  }
  return v;
}

const For *Program::loopOf(ValueId v, size_t *position) const {
  const Value &val = value(v);
  if (val.def != Value::Def::Stmt || val.defIndex >= body.size()) return nullptr;
  const auto *f = std::get_if<For>(&body[val.defIndex].node);
  if (!f) return nullptr;
  for (const std::vector<ValueId> *list : {&f->carried, &f->results})
    for (size_t k = 0; k < list->size(); ++k)
      if ((*list)[k] == v) {
        if (position) *position = k;
        return f;
      }
  return nullptr;
}

const Alloc *Program::allocOf(ValueId v) const {
  for (size_t guard = 0; guard <= values.size(); ++guard) {
    const Value &val = value(v);
    if (!val.isTensor || val.def != Value::Def::Stmt || val.defIndex >= body.size()) return nullptr;
    if (const auto *al = std::get_if<Alloc>(&body[val.defIndex].node)) return al->result == v ? al : nullptr;
    size_t k = 0;
    const For *f = loopOf(v, &k);
    if (!f || k >= f->inits.size() || !f->inits[k].isValue() || f->inits[k].value.index >= values.size()) return nullptr;
    v = f->inits[k].value;
  }
  return nullptr;  // a cycle: only a malformed built program has one
}

OperandType operandType(const Program &p, const Operand &o) {
  switch (o.kind) {
    case Operand::Kind::Value: {
      const Value &v = p.value(o.value);
      return {v.isTensor, false, v.dtype};
    }
    case Operand::Kind::Int: return {false, true, DType::i64};
    case Operand::Kind::Float: return {false, true, DType::f64};
  }
  return {};
}

ScalarOpType inferScalarOp(const Program &p, const ScalarOp &n) {
  ScalarOpType r;
  OpCode op = n.op;
  const Operand &a = n.a, &b = n.b;
  if (opClass(op) == OpClass::Query) {
    if (!a.isValue() || !p.value(a.value).isTensor) {
      r.error = std::string("'") + opName(op) + "' expects a tensor as its first operand";
      r.where = a.loc;
      return r;
    }
    if (b.kind != Operand::Kind::Int) {
      r.error = std::string("'") + opName(op) + "' expects an integer literal dim as its second operand";
      r.where = b.loc;
      return r;
    }
    uint32_t rank = p.value(a.value).rank;
    if (b.i < 0 || b.i >= static_cast<int64_t>(rank)) {
      r.error = "dim " + std::to_string(b.i) + " is out of range for %" + p.value(a.value).name + " of rank " +
                std::to_string(rank);
      r.where = b.loc;
      return r;
    }
    r.type = DType::i64;
    return r;
  }
  const Operand *ops[3] = {&n.a, &n.b, &n.c};
  unsigned arity = opArity(op);
  OperandType types[3];
  for (unsigned k = 0; k < arity; ++k) {
    types[k] = operandType(p, *ops[k]);
    if (types[k].isTensor) {
      r.error = std::string("'") + opName(op) + "' expects scalar operands; %" + p.value(ops[k]->value).name +
                " is a tensor";
      r.where = ops[k]->loc;
      return r;
    }
  }
  OpType t = opType(op, std::span<const OperandType>(types, arity));
  const Operand &culprit = *ops[t.culprit];
  // The two operands that meet: a binary op's, or select's choices.
  const OperandType &first = types[arity == 3 ? 1 : 0], &second = types[arity == 3 ? 2 : 1];
  switch (t.rule) {
    case TypeRule::Ok: r.type = t.type; break;
    case TypeRule::MixedTypes:
      r.error = std::string("operands of '") + opName(op) + "' have different types " + dtypeName(first.dtype) +
                " and " + dtypeName(second.dtype);
      break;
    case TypeRule::FloatLiteralInInteger:
      r.error = std::string("float literal where ") + dtypeName(t.operands) + " is expected";
      break;
    case TypeRule::BoolArithmetic: r.error = std::string("'") + opName(op) + "' does not apply to bool"; break;
    case TypeRule::IntegerOnly:
      r.error = std::string("'") + opName(op) + "' expects integer operands, not " + dtypeName(t.operands);
      break;
    case TypeRule::BoolOrder: r.error = std::string("'") + opName(op) + "' does not order bool values"; break;
    case TypeRule::FloatOnly:
      r.error = std::string("'") + opName(op) + "' expects a float operand (f32 or f64), not " + dtypeName(t.operands);
      break;
    case TypeRule::ConditionNotBool:
      r.error = std::string("the condition of 'select' must be a bool value, not ") +
                (types[0].isLiteral ? "a literal" : dtypeName(types[0].dtype));
      break;
  }
  if (!r.type) r.where = culprit.loc;
  return r;
}

OpType opType(OpCode op, std::span<const OperandType> in) {
  OpType t;
  OpClass cls = opClass(op);
  auto broken = [&](TypeRule rule, int culprit = 0) {
    t.rule = rule;
    t.culprit = culprit;
    return t;
  };
  if (cls == OpClass::Convert || cls == OpClass::Math) {
    t.operands = in[0].dtype;
    t.type = cls == OpClass::Convert ? convertTarget(op) : in[0].dtype;
    if (cls == OpClass::Math && !isFloat(in[0].dtype)) return broken(TypeRule::FloatOnly);
    return t;
  }
  // The operands that meet, and where they sit.
  int first = cls == OpClass::Select ? 1 : 0;
  const OperandType &a = in[first], &b = in[first + 1];
  if (!a.isLiteral) t.operands = a.dtype;
  else if (!b.isLiteral) t.operands = b.dtype;
  else t.operands = isFloat(a.dtype) || isFloat(b.dtype) ? DType::f64 : DType::i64;
  t.type = cls == OpClass::Compare ? DType::Bool : t.operands;
  if (cls == OpClass::Select && (in[0].isLiteral || in[0].dtype != DType::Bool)) return broken(TypeRule::ConditionNotBool);
  if (!a.isLiteral && !b.isLiteral && a.dtype != b.dtype) return broken(TypeRule::MixedTypes, first + 1);
  if (a.isLiteral && isFloat(a.dtype) && !isFloat(t.operands)) return broken(TypeRule::FloatLiteralInInteger, first);
  if (b.isLiteral && isFloat(b.dtype) && !isFloat(t.operands))
    return broken(TypeRule::FloatLiteralInInteger, first + 1);
  if (cls == OpClass::Select) return t;
  if (t.operands == DType::Bool && cls != OpClass::Compare) return broken(TypeRule::BoolArithmetic);
  if (cls == OpClass::IntArith && isFloat(t.operands)) return broken(TypeRule::IntegerOnly);
  if (cls == OpClass::Compare && t.operands == DType::Bool && op != OpCode::Eq && op != OpCode::Ne)
    return broken(TypeRule::BoolOrder);
  return t;
}

std::string kernelAttributeList(bool custom) {
  std::vector<const char *> keys;
#define HOSTJIT_KERNEL_ATTR(key, member, kind, owner, example) \
  if ((std::strcmp(#owner, "Custom") == 0) == custom) keys.push_back(key);
#include "hostjit/ir/kernel_attrs.def"
#undef HOSTJIT_KERNEL_ATTR
  std::string out;
  for (size_t i = 0; i < keys.size(); ++i) out += (i == 0 ? "" : i + 1 == keys.size() ? " or " : ", ") + std::string(keys[i]);
  return out;
}

}  // namespace hostjit
