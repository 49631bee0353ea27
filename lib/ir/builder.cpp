// builder.cpp - ProgramBuilder: a Program built statement by statement,
// with its values, expressions and loop and stream scopes.
#include "hostjit/ir/ir.h"

#include <cstring>

#include "hostjit/ir/error.h"
#include "hostjit/ir/scalar_semantics.h"

namespace hostjit {

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

ValueId ProgramBuilder::tensorInput(std::string name, DType dtype, std::vector<int64_t> dims, Loc loc, bool written) {
  ValueId id = newValue(std::move(name), true, dtype, static_cast<uint32_t>(dims.size()), Value::Def::TensorInput,
                        static_cast<uint32_t>(p_.tensorInputs.size()), loc);
  p_.values[id.index].inputDims = std::move(dims);
  p_.values[id.index].written = written;
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
  append(node, loc);
  return id;
}

ValueId ProgramBuilder::alloc(std::string name, DType dtype, std::vector<Operand> extents,
                              std::vector<Operand> strides, bool zeroInit, bool resetsToZero, Loc loc) {
  for (const Operand &o : extents) checkOperand(o);
  for (const Operand &o : strides) checkOperand(o);
  uint32_t stmtIndex = static_cast<uint32_t>(p_.body.size());
  ValueId id = newValue(std::move(name), true, dtype, static_cast<uint32_t>(extents.size()), Value::Def::Stmt,
                        stmtIndex, loc);
  append(Alloc{id, dtype, std::move(extents), std::move(strides), zeroInit, resetsToZero}, loc);
  return id;
}

ValueId ProgramBuilder::view(std::string name, Operand base, std::vector<Operand> extents,
                             std::vector<Operand> strides, Loc loc, Operand offset) {
  checkOperand(base);
  for (const Operand &o : extents) checkOperand(o);
  for (const Operand &o : strides) checkOperand(o);
  checkOperand(offset);
  DType dtype = base.isValue() ? p_.values[base.value.index].dtype : DType::f32;
  uint32_t stmtIndex = static_cast<uint32_t>(p_.body.size());
  ValueId id = newValue(std::move(name), true, dtype, static_cast<uint32_t>(extents.size()), Value::Def::Stmt,
                        stmtIndex, loc);
  append(View{id, base, std::move(extents), std::move(strides), offset}, loc);
  return id;
}

void ProgramBuilder::free(Operand tensor, Loc loc) {
  checkOperand(tensor);
  append(Free{tensor}, loc);
}

void ProgramBuilder::launch(KernelId kernel, std::array<Operand, 3> grid, std::array<Operand, 3> block, Operand smem,
                            std::vector<Operand> args, Loc loc) {
  if (kernel.index >= p_.kernels.size()) throw ApiMisuse("ProgramBuilder::launch: unknown kernel id");
  for (const Operand &o : grid) checkOperand(o);
  for (const Operand &o : block) checkOperand(o);
  checkOperand(smem);
  for (const Operand &o : args) checkOperand(o);
  append(Launch{kernel, grid, block, smem, std::move(args)}, loc);
}

void ProgramBuilder::ret(std::vector<Operand> values, Loc loc) {
  for (const Operand &o : values) checkOperand(o);
  append(Return{std::move(values)}, loc);
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
  append(std::move(f), loc);
  open_.push_back(stmtIndex);
  return out;
}

void ProgramBuilder::yield(std::vector<Operand> values, Loc loc) {
  for (const Operand &o : values) checkOperand(o);
  append(Yield{std::move(values)}, loc);
}

void ProgramBuilder::forEnd(Loc loc) {
  uint32_t begin = closeBlock(StmtKind::For, "ProgramBuilder::forEnd: no loop is the innermost open block");
  std::get<For>(p_.body[begin].node).end = static_cast<uint32_t>(p_.body.size());
  append(EndFor{begin}, loc);
}

ValueId ProgramBuilder::stream(std::string name, Loc loc) {
  ValueId id = handle(std::move(name), Value::Handle::Stream, loc);
  append(StreamDef{id}, loc);
  return id;
}

void ProgramBuilder::onBegin(Operand stream, Loc loc) {
  checkOperand(stream);
  open_.push_back(static_cast<uint32_t>(p_.body.size()));
  append(On{stream, 0}, loc);
}

void ProgramBuilder::onEnd(Loc loc) {
  uint32_t begin = closeBlock(StmtKind::On, "ProgramBuilder::onEnd: no 'on' block is the innermost open block");
  std::get<On>(p_.body[begin].node).end = static_cast<uint32_t>(p_.body.size());
  append(EndOn{begin}, loc);
}

void ProgramBuilder::append(Stmt::Node node, Loc loc) {
  Stmt s;
  s.node = std::move(node);
  s.loc = loc;
  p_.body.push_back(std::move(s));
}

uint32_t ProgramBuilder::closeBlock(StmtKind kind, const char *misuse) {
  if (open_.empty() || p_.body[open_.back()].kind() != kind) throw ApiMisuse(misuse);
  uint32_t begin = open_.back();
  open_.pop_back();
  return begin;
}

ValueId ProgramBuilder::record(std::string name, Loc loc) {
  ValueId id = handle(std::move(name), Value::Handle::Event, loc);
  append(Record{id}, loc);
  return id;
}

ValueId ProgramBuilder::handle(std::string name, Value::Handle kind, Loc loc) {
  uint32_t stmtIndex = static_cast<uint32_t>(p_.body.size());
  ValueId id = newValue(std::move(name), false, DType::i64, 0, Value::Def::Stmt, stmtIndex, loc);
  p_.values[id.index].handle = kind;
  return id;
}

void ProgramBuilder::wait(Operand event, Loc loc) {
  checkOperand(event);
  append(Wait{event}, loc);
}

void ProgramBuilder::sync(Loc loc) {
  append(Sync{}, loc);
}

ValueId ProgramBuilder::commQuery(std::string name, bool world, Loc loc) {
  uint32_t stmtIndex = static_cast<uint32_t>(p_.body.size());
  ValueId id = newValue(std::move(name), false, DType::i64, 0, Value::Def::Stmt, stmtIndex, loc);
  p_.values[id.index].expr = p_.exprs.commQuery(world);
  append(CommQuery{id, world}, loc);
  return id;
}

void ProgramBuilder::matmul(Matmul m, Loc loc) {
  for (const Operand *o : {&m.a, &m.b, &m.c, &m.bias, &m.workspace}) checkOperand(*o);
  append(std::move(m), loc);
}

void ProgramBuilder::call(KernelId callee, std::vector<Operand> args, Loc loc) {
  if (callee.index >= p_.kernels.size()) throw ApiMisuse("ProgramBuilder::call: unknown declaration id");
  for (const Operand &o : args) checkOperand(o);
  append(Call{callee, std::move(args)}, loc);
}

void ProgramBuilder::collective(Collective c, Loc loc) {
  checkOperand(c.src);
  checkOperand(c.dst);
  checkOperand(c.peer);
  append(std::move(c), loc);
}

}  // namespace hostjit
