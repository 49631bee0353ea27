// ir.cpp - op tables, the hash-consing expression table and the builder.
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

ExprId ExprTable::inputSize(uint32_t input, uint32_t dim) {
  Expr e;
  e.kind = Expr::Kind::InputSize;
  e.input = input;
  e.dim = dim;
  return intern(e);
}

ExprId ExprTable::inputStride(uint32_t input, uint32_t dim) {
  Expr e;
  e.kind = Expr::Kind::InputStride;
  e.input = input;
  e.dim = dim;
  return intern(e);
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

ProgramBuilder::ProgramBuilder(std::string funcName) { p_.funcName = std::move(funcName); }

KernelId ProgramBuilder::kernel(std::string name, std::vector<ParamType> params, std::optional<std::string> cuda,
                                std::optional<std::string> entry, std::optional<std::string> host, Loc loc) {
  Kernel k;
  k.name = std::move(name);
  k.params = std::move(params);
  k.cuda = std::move(cuda);
  k.entry = std::move(entry);
  k.host = std::move(host);
  k.loc = loc;
  p_.kernels.push_back(std::move(k));
  return KernelId{static_cast<uint32_t>(p_.kernels.size() - 1)};
}

KernelId ProgramBuilder::kernel(Kernel k) {
  p_.kernels.push_back(std::move(k));
  return KernelId{static_cast<uint32_t>(p_.kernels.size() - 1)};
}

ValueId ProgramBuilder::newValue(std::string name, bool tensor, DType dtype, uint32_t rank, Value::Def def,
                                 uint32_t index, Loc loc) {
  Value v;
  v.name = std::move(name);
  v.isTensor = tensor;
  v.dtype = dtype;
  v.rank = rank;
  v.def = def;
  v.defIndex = index;
  v.loc = loc;
  p_.values.push_back(std::move(v));
  return ValueId{static_cast<uint32_t>(p_.values.size() - 1)};
}

ValueId ProgramBuilder::tensorInput(std::string name, DType dtype, std::vector<int64_t> dims, Loc loc) {
  ValueId id = newValue(std::move(name), true, dtype, static_cast<uint32_t>(dims.size()), Value::Def::TensorInput,
                        static_cast<uint32_t>(p_.tensorInputs.size()), loc);
  p_.values[id.index].inputDims = std::move(dims);
  p_.tensorInputs.push_back(id);
  p_.params.push_back(id);
  return id;
}

ValueId ProgramBuilder::scalarInput(std::string name, DType dtype, Loc loc) {
  uint32_t index = static_cast<uint32_t>(p_.scalarInputs.size());
  ValueId id = newValue(std::move(name), false, dtype, 0, Value::Def::ScalarInput, index, loc);
  if (isScalarType(dtype)) p_.values[id.index].expr = p_.exprs.scalarInput(index, dtype);
  p_.scalarInputs.push_back(id);
  p_.params.push_back(id);
  return id;
}

void ProgramBuilder::checkOperand(const Operand &o) const {
  if (o.isValue() && o.value.index >= p_.values.size())
    throw ApiMisuse("ProgramBuilder: operand refers to a value that is not in this program");
}

ExprId ProgramBuilder::exprOf(const Operand &o, DType want) {
  switch (o.kind) {
    case Operand::Kind::Value: return p_.values[o.value.index].expr;
    case Operand::Kind::Int:
      return isFloat(want) ? p_.exprs.constFloat(static_cast<double>(o.i), want) : p_.exprs.constInt(o.i, want);
    case Operand::Kind::Float: return isFloat(want) ? p_.exprs.constFloat(o.f, want) : ExprId{};
  }
  return {};
}

ValueId ProgramBuilder::op(std::string name, OpCode op, Operand a, Operand b, Loc loc) {
  if (opArity(op) != 2)
    throw ApiMisuse(std::string("ProgramBuilder::op: '") + opName(op) + "' does not take two operands");
  return scalarOp(std::move(name), op, a, b, Operand::integer(0), loc);
}

ValueId ProgramBuilder::unary(std::string name, OpCode op, Operand a, Loc loc) {
  if (opArity(op) != 1)
    throw ApiMisuse(std::string("ProgramBuilder::unary: '") + opName(op) + "' does not take one operand");
  return scalarOp(std::move(name), op, a, Operand::integer(0), Operand::integer(0), loc);
}

ValueId ProgramBuilder::select(std::string name, Operand cond, Operand a, Operand b, Loc loc) {
  return scalarOp(std::move(name), OpCode::Select, cond, a, b, loc);
}

ValueId ProgramBuilder::scalarOp(std::string name, OpCode op, Operand a, Operand b, Operand c, Loc loc) {
  checkOperand(a);
  checkOperand(b);
  checkOperand(c);
  uint32_t stmtIndex = static_cast<uint32_t>(p_.body.size());
  ScalarOp node{ValueId{}, op, a, b, c};
  ScalarOpType t = inferScalarOp(p_, node);
  ValueId id = newValue(std::move(name), false, t.type.value_or(DType::i64), 0, Value::Def::Stmt, stmtIndex, loc);
  if (t.type) {
    ExprId e;
    if (opClass(op) == OpClass::Query) {
      const Value &tv = p_.values[a.value.index];
      uint32_t dim = static_cast<uint32_t>(b.i);
      if (tv.def == Value::Def::TensorInput) {
        int64_t fixed = tv.inputDims.size() > dim ? tv.inputDims[dim] : kDynamic;
        if (op == OpCode::Size && fixed != kDynamic) e = p_.exprs.constInt(fixed);
        else e = op == OpCode::Size ? p_.exprs.inputSize(tv.defIndex, dim) : p_.exprs.inputStride(tv.defIndex, dim);
      } else if (tv.def == Value::Def::Stmt && tv.defIndex < p_.body.size()) {
        const std::vector<Operand> *extents = nullptr, *strides = nullptr;
        if (const Alloc *al = p_.allocOf(a.value)) extents = &al->extents, strides = &al->strides;
        if (const auto *vw = std::get_if<View>(&p_.body[tv.defIndex].node)) extents = &vw->extents, strides = &vw->strides;
        if (extents) {
          if (op == OpCode::Size) {
            if (dim < extents->size()) e = exprOf((*extents)[dim], DType::i64);
          } else if (!strides->empty()) {
            if (dim < strides->size()) e = exprOf((*strides)[dim], DType::i64);
          } else {
            e = p_.exprs.constInt(1);
            for (size_t d = dim + 1; d < extents->size() && e.valid(); ++d) {
              ExprId x = exprOf((*extents)[d], DType::i64);
              e = x.valid() ? p_.exprs.binary(OpCode::Mul, e, x, nullptr) : ExprId{};
            }
          }
        }
      }
    } else {
      OperandType types[3] = {operandType(p_, a), operandType(p_, b), operandType(p_, c)};
      unsigned arity = opArity(op);
      DType operandT = opType(op, std::span<const OperandType>(types, arity)).operands;
      std::string err;
      if (arity == 1) {
        if (ExprId ea = exprOf(a, operandT); ea.valid()) e = p_.exprs.unary(op, ea, &err);
      } else if (arity == 3) {
        ExprId ec = exprOf(a, DType::Bool), ea = exprOf(b, operandT), eb = exprOf(c, operandT);
        if (ec.valid() && ea.valid() && eb.valid()) e = p_.exprs.select(ec, ea, eb);
      } else if (ExprId ea = exprOf(a, operandT), eb = exprOf(b, operandT); ea.valid() && eb.valid()) {
        e = p_.exprs.binary(op, ea, eb, &err);
      }
    }
    p_.values[id.index].expr = e;
  }
  node.result = id;
  Stmt s;
  s.node = node;
  s.loc = loc;
  p_.body.push_back(std::move(s));
  return id;
}

ValueId ProgramBuilder::alloc(std::string name, DType dtype, std::vector<Operand> extents,
                              std::vector<Operand> strides, bool zeroInit, bool resetsToZero, Loc loc) {
  for (const Operand &o : extents) checkOperand(o);
  for (const Operand &o : strides) checkOperand(o);
  uint32_t stmtIndex = static_cast<uint32_t>(p_.body.size());
  ValueId id = newValue(std::move(name), true, dtype, static_cast<uint32_t>(extents.size()), Value::Def::Stmt,
                        stmtIndex, loc);
  Stmt s;
  s.node = Alloc{id, dtype, std::move(extents), std::move(strides), zeroInit, resetsToZero};
  s.loc = loc;
  p_.body.push_back(std::move(s));
  return id;
}

ValueId ProgramBuilder::view(std::string name, Operand base, std::vector<Operand> extents,
                             std::vector<Operand> strides, Loc loc) {
  checkOperand(base);
  for (const Operand &o : extents) checkOperand(o);
  for (const Operand &o : strides) checkOperand(o);
  DType dtype = base.isValue() ? p_.values[base.value.index].dtype : DType::f32;
  uint32_t stmtIndex = static_cast<uint32_t>(p_.body.size());
  ValueId id = newValue(std::move(name), true, dtype, static_cast<uint32_t>(extents.size()), Value::Def::Stmt,
                        stmtIndex, loc);
  Stmt s;
  s.node = View{id, base, std::move(extents), std::move(strides)};
  s.loc = loc;
  p_.body.push_back(std::move(s));
  return id;
}

void ProgramBuilder::free(Operand tensor, Loc loc) {
  checkOperand(tensor);
  Stmt s;
  s.node = Free{tensor};
  s.loc = loc;
  p_.body.push_back(std::move(s));
}

void ProgramBuilder::launch(KernelId kernel, std::array<Operand, 3> grid, std::array<Operand, 3> block, Operand smem,
                            std::vector<Operand> args, Loc loc) {
  if (kernel.index >= p_.kernels.size()) throw ApiMisuse("ProgramBuilder::launch: unknown kernel id");
  for (const Operand &o : grid) checkOperand(o);
  for (const Operand &o : block) checkOperand(o);
  checkOperand(smem);
  for (const Operand &o : args) checkOperand(o);
  Stmt s;
  s.node = Launch{kernel, grid, block, smem, std::move(args)};
  s.loc = loc;
  p_.body.push_back(std::move(s));
}

void ProgramBuilder::ret(std::vector<Operand> values, Loc loc) {
  for (const Operand &o : values) checkOperand(o);
  Stmt s;
  s.node = Return{std::move(values)};
  s.loc = loc;
  p_.body.push_back(std::move(s));
}

ValueId ProgramBuilder::forBegin(std::string name, Operand lo, Operand hi, Loc loc) {
  return forBegin(std::move(name), lo, hi, {}, loc).index;
}

ProgramBuilder::ForValues ProgramBuilder::forBegin(std::string name, Operand lo, Operand hi,
                                                   std::vector<LoopCarry> carry, Loc loc) {
  checkOperand(lo);
  checkOperand(hi);
  for (const LoopCarry &c : carry) checkOperand(c.init);
  uint32_t stmtIndex = static_cast<uint32_t>(p_.body.size());
  ForValues out;
  out.index = newValue(std::move(name), false, DType::i64, 0, Value::Def::Stmt, stmtIndex, loc);
  p_.values[out.index.index].expr = p_.exprs.loopIndex(loops_++);
  For f{out.index, lo, hi, 0, {}, {}, {}};
  for (LoopCarry &c : carry) {
    // A carried buffer has its init's type; a bad init gets f32[] (the
    // verifier reports the init).
    bool buffer = c.init.isValue() && p_.values[c.init.value.index].isTensor;
    DType dtype = buffer ? p_.values[c.init.value.index].dtype : DType::f32;
    uint32_t rank = buffer ? p_.values[c.init.value.index].rank : 0;
    f.carried.push_back(newValue(std::move(c.name), true, dtype, rank, Value::Def::Stmt, stmtIndex, c.loc));
    f.results.push_back(newValue(std::move(c.result), true, dtype, rank, Value::Def::Stmt, stmtIndex, c.resultLoc));
    f.inits.push_back(c.init);
  }
  out.carried = f.carried;
  out.results = f.results;
  Stmt s;
  s.node = std::move(f);
  s.loc = loc;
  p_.body.push_back(std::move(s));
  open_.push_back(stmtIndex);
  return out;
}

void ProgramBuilder::yield(std::vector<Operand> values, Loc loc) {
  for (const Operand &o : values) checkOperand(o);
  Stmt s;
  s.node = Yield{std::move(values)};
  s.loc = loc;
  p_.body.push_back(std::move(s));
}

void ProgramBuilder::forEnd(Loc loc) {
  if (open_.empty() || p_.body[open_.back()].kind() != StmtKind::For)
    throw ApiMisuse("ProgramBuilder::forEnd: no loop is the innermost open block");
  uint32_t begin = open_.back();
  open_.pop_back();
  std::get<For>(p_.body[begin].node).end = static_cast<uint32_t>(p_.body.size());
  Stmt s;
  s.node = EndFor{begin};
  s.loc = loc;
  p_.body.push_back(std::move(s));
}

ValueId ProgramBuilder::stream(std::string name, Loc loc) {
  uint32_t stmtIndex = static_cast<uint32_t>(p_.body.size());
  ValueId id = newValue(std::move(name), false, DType::i64, 0, Value::Def::Stmt, stmtIndex, loc);
  p_.values[id.index].handle = Value::Handle::Stream;
  Stmt s;
  s.node = StreamDef{id};
  s.loc = loc;
  p_.body.push_back(std::move(s));
  return id;
}

void ProgramBuilder::onBegin(Operand stream, Loc loc) {
  checkOperand(stream);
  open_.push_back(static_cast<uint32_t>(p_.body.size()));
  Stmt s;
  s.node = On{stream, 0};
  s.loc = loc;
  p_.body.push_back(std::move(s));
}

void ProgramBuilder::onEnd(Loc loc) {
  if (open_.empty() || p_.body[open_.back()].kind() != StmtKind::On)
    throw ApiMisuse("ProgramBuilder::onEnd: no 'on' block is the innermost open block");
  uint32_t begin = open_.back();
  open_.pop_back();
  std::get<On>(p_.body[begin].node).end = static_cast<uint32_t>(p_.body.size());
  Stmt s;
  s.node = EndOn{begin};
  s.loc = loc;
  p_.body.push_back(std::move(s));
}

ValueId ProgramBuilder::record(std::string name, Loc loc) {
  uint32_t stmtIndex = static_cast<uint32_t>(p_.body.size());
  ValueId id = newValue(std::move(name), false, DType::i64, 0, Value::Def::Stmt, stmtIndex, loc);
  p_.values[id.index].handle = Value::Handle::Event;
  Stmt s;
  s.node = Record{id};
  s.loc = loc;
  p_.body.push_back(std::move(s));
  return id;
}

void ProgramBuilder::wait(Operand event, Loc loc) {
  checkOperand(event);
  Stmt s;
  s.node = Wait{event};
  s.loc = loc;
  p_.body.push_back(std::move(s));
}

void ProgramBuilder::sync(Loc loc) {
  Stmt s;
  s.node = Sync{};
  s.loc = loc;
  p_.body.push_back(std::move(s));
}

ValueId ProgramBuilder::commQuery(std::string name, bool world, Loc loc) {
  uint32_t stmtIndex = static_cast<uint32_t>(p_.body.size());
  ValueId id = newValue(std::move(name), false, DType::i64, 0, Value::Def::Stmt, stmtIndex, loc);
  p_.values[id.index].expr = p_.exprs.commQuery(world);
  Stmt s;
  s.node = CommQuery{id, world};
  s.loc = loc;
  p_.body.push_back(std::move(s));
  return id;
}

void ProgramBuilder::collective(Collective c, Loc loc) {
  checkOperand(c.src);
  checkOperand(c.dst);
  checkOperand(c.peer);
  Stmt s;
  s.node = std::move(c);
  s.loc = loc;
  p_.body.push_back(std::move(s));
}

}  // namespace hostjit
