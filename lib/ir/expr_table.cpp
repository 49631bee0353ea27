// expr_table.cpp - the operation tables and the hash-consing table of scalar
// expressions: interning, constant folding, the order of operands.
#include "hostjit/ir/ir.h"

#include <cstring>

#include "hostjit/ir/error.h"
#include "hostjit/ir/scalar_semantics.h"

namespace hostjit {

namespace {
struct OpInfo {
  const char *name;
  OpClass cls;
};
const OpInfo kOps[] = {
#define HOSTJIT_OP(name, spelling, cls) {spelling, OpClass::cls},
#include "hostjit/ir/ir_ops.def"
#undef HOSTJIT_OP
};

// Whether a op b == b op a for every pair of values of type t: min and max
// of floats are not (with a NaN they give the first operand), so their
// operands keep the order written.
bool isCommutative(OpCode op, DType t) {
  if (op == OpCode::Min || op == OpCode::Max) return !isFloat(t);
  return op == OpCode::Add || op == OpCode::Mul || op == OpCode::Eq || op == OpCode::Ne;
}
}  // namespace

const char *opName(OpCode op) { return kOps[static_cast<size_t>(op)].name; }
OpClass opClass(OpCode op) { return kOps[static_cast<size_t>(op)].cls; }
std::optional<OpCode> parseOp(std::string_view s) {
  for (size_t i = 0; i < std::size(kOps); ++i)
    if (s == kOps[i].name) return static_cast<OpCode>(i);
  return std::nullopt;
}
unsigned opArity(OpCode op) {
  switch (opClass(op)) {
    case OpClass::Convert:
    case OpClass::Math: return 1;
    case OpClass::Select: return 3;
    default: return 2;
  }
}
DType convertTarget(OpCode op) {
  switch (op) {
    case OpCode::ToI32: return DType::i32;
    case OpCode::ToF32: return DType::f32;
    case OpCode::ToF64: return DType::f64;
    default: return DType::i64;
  }
}

size_t ExprTable::Hash::operator()(const Expr &e) const {
  uint64_t bits;
  std::memcpy(&bits, &e.f, sizeof bits);
  uint64_t h = static_cast<uint64_t>(e.kind) * 0x9E3779B97F4A7C15ULL;
  for (uint64_t x : {uint64_t(e.type), uint64_t(e.op), uint64_t(e.i), bits, uint64_t(e.input), uint64_t(e.dim),
                     uint64_t(e.a.index), uint64_t(e.b.index), uint64_t(e.c.index)})
    h = (h ^ x) * 0x100000001B3ULL + (h >> 29);
  return static_cast<size_t>(h);
}

ExprId ExprTable::intern(const Expr &e) {
  auto [it, inserted] = index_.emplace(e, static_cast<uint32_t>(nodes_.size()));
  if (inserted) nodes_.push_back(e);
  return ExprId{it->second};
}

ExprId ExprTable::constInt(int64_t v, DType type) {
  Expr e;
  e.kind = Expr::Kind::Const;
  e.type = type;
  e.i = wrapTo(type, v);
  return intern(e);
}

ExprId ExprTable::constFloat(double v, DType type) {
  Expr e;
  e.kind = Expr::Kind::Const;
  e.type = type;
  e.f = type == DType::f32 ? static_cast<double>(static_cast<float>(v)) : v;
  return intern(e);
}

namespace {

// A size or stride of dim `dim` of tensor input `input`.
Expr inputDim(Expr::Kind kind, uint32_t input, uint32_t dim) {
  Expr e;
  e.kind = kind;
  e.input = input;
  e.dim = dim;
  return e;
}

}  // namespace

ExprId ExprTable::inputSize(uint32_t input, uint32_t dim) { return intern(inputDim(Expr::Kind::InputSize, input, dim)); }

ExprId ExprTable::inputStride(uint32_t input, uint32_t dim) {
  return intern(inputDim(Expr::Kind::InputStride, input, dim));
}

ExprId ExprTable::scalarInput(uint32_t input, DType type) {
  Expr e;
  e.kind = Expr::Kind::ScalarInput;
  e.type = type;
  e.input = input;
  return intern(e);
}

ExprId ExprTable::loopIndex(uint32_t loop) {
  Expr e;
  e.kind = Expr::Kind::LoopIndex;
  e.input = loop;
  return intern(e);
}

ExprId ExprTable::commQuery(bool world) {
  Expr e;
  e.kind = world ? Expr::Kind::World : Expr::Kind::Rank;
  return intern(e);
}

const char *collectiveKeyword(Collective::Kind k) {
  static const char *names[] = {"all_reduce", "all_gather", "reduce_scatter", "broadcast", "send", "recv"};
  return names[static_cast<int>(k)];
}

ExprId ExprTable::binary(OpCode op, ExprId a, ExprId b, std::string *error) {
  const Expr ea = (*this)[a], eb = (*this)[b];
  if (ea.type != eb.type) {  // callers type-check first; never mix widths
    if (error) *error = "operands of different types";
    return ExprId{};
  }
  DType t = ea.type;
  bool isCmp = opClass(op) == OpClass::Compare;
  DType resultType = isCmp ? DType::Bool : t;
  bool ca = ea.kind == Expr::Kind::Const, cb = eb.kind == Expr::Kind::Const;
  if (ca && cb) {
    if (isFloat(t)) {
      double f = 0;
      int64_t i = 0;
      evalFloatOp(op, t, ea.f, eb.f, &f, &i);
      return isCmp ? constInt(i, DType::Bool) : constFloat(f, t);
    }
    int64_t r = 0;
    if (ScalarError err = evalIntOp(op, t, ea.i, eb.i, &r); err != ScalarError::None) {
      if (error) *error = scalarErrorText(err);
      return ExprId{};
    }
    return constInt(r, resultType);
  }
  if (!isFloat(t) && !isCmp) {
    auto isInt = [](const Expr &e, int64_t v) { return e.kind == Expr::Kind::Const && e.i == v; };
    switch (op) {
      case OpCode::Add:
        if (isInt(eb, 0)) return a;
        if (isInt(ea, 0)) return b;
        break;
      case OpCode::Sub:
        if (isInt(eb, 0)) return a;
        if (a == b) return constInt(0, t);
        break;
      case OpCode::Mul:
        if (isInt(eb, 1)) return a;
        if (isInt(ea, 1)) return b;
        if (isInt(ea, 0) || isInt(eb, 0)) return constInt(0, t);
        break;
      case OpCode::Div:
      case OpCode::CeilDiv:
        if (isInt(eb, 1)) return a;
        break;
      case OpCode::Min:
      case OpCode::Max:
        if (a == b) return a;
        break;
      default: break;
    }
  }
  if (isCommutative(op, t) && b.index < a.index) std::swap(a, b);
  Expr e;
  e.kind = Expr::Kind::Op;
  e.type = resultType;
  e.op = op;
  e.a = a;
  e.b = b;
  return intern(e);
}

ExprId ExprTable::unary(OpCode op, ExprId a, std::string *error) {
  const Expr ea = (*this)[a];
  DType type = opClass(op) == OpClass::Convert ? convertTarget(op) : ea.type;
  if (type == ea.type && opClass(op) == OpClass::Convert) return a;
  if (ea.kind == Expr::Kind::Const) {
    int64_t i = 0;
    double f = 0;
    if (ScalarError err = evalUnaryOp(op, ea.type, ea.i, ea.f, &i, &f); err != ScalarError::None) {
      if (error) *error = scalarErrorText(err, type);
      return ExprId{};
    }
    return isFloat(type) ? constFloat(f, type) : constInt(i, type);
  }
  Expr e;
  e.kind = Expr::Kind::Op;
  e.type = type;
  e.op = op;
  e.a = a;
  return intern(e);
}

ExprId ExprTable::select(ExprId cond, ExprId a, ExprId b) {
  const Expr &ec = (*this)[cond];
  if (ec.kind == Expr::Kind::Const) return ec.i ? a : b;
  if (a == b) return a;
  Expr e;
  e.kind = Expr::Kind::Op;
  e.type = (*this)[a].type;
  e.op = OpCode::Select;
  e.a = cond;
  e.b = a;
  e.c = b;
  return intern(e);
}

}  // namespace hostjit
