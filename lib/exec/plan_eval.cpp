// plan_eval.cpp - a plan's scalar expressions evaluated for one call.
#include "hostjit/exec/plan_eval.h"

#include <cstring>
#include <string>

#include "hostjit/ir/scalar_semantics.h"

namespace hostjit {

namespace {

int64_t inputStride(const DLTensor *t, uint32_t dim) {
  if (t->strides) return t->strides[dim];
  // checkArguments keeps the non-zero dims' product within 2^62 bytes, so
  // this cannot overflow (unsigned, as the JIT's multiply wraps).
  uint64_t s = 1;
  for (int32_t d = t->ndim - 1; d > static_cast<int32_t>(dim); --d) s *= static_cast<uint64_t>(t->shape[d]);
  return static_cast<int64_t>(s);
}

}  // namespace

namespace {

// Expression i into regs[i]; a loop index from indices.
int32_t evaluateOne(const Plan &plan, size_t i, hj_context *ctx, const DLTensor *const *inputs,
                    const hj_value *scalars, const int64_t *indices, PlanReg *regs) {
  const Expr &e = plan.exprs[i];
  PlanReg &r = regs[i];
  switch (e.kind) {
    case Expr::Kind::Const:
      if (e.type == DType::f32) r.f32 = static_cast<float>(e.f);
      else if (isFloat(e.type)) r.f = e.f;
      else r.i = e.i;
      break;
    case Expr::Kind::InputSize: r.i = inputs[e.input]->shape[e.dim]; break;
    case Expr::Kind::InputStride: r.i = inputStride(inputs[e.input], e.dim); break;
    case Expr::Kind::ScalarInput: {
      const hj_value &v = scalars[e.input];
      switch (e.type) {
        case DType::i64: r.i = v.i64; break;
        case DType::i32: r.i = v.i32; break;
        case DType::f32: std::memcpy(&r.f32, &v.f32, sizeof(float)); break;
        case DType::f64: r.f = v.f64; break;
        default: r.i = v.b != 0; break;
      }
      break;
    }
    case Expr::Kind::LoopIndex: r.i = indices[e.input]; break;
    case Expr::Kind::Rank: r.i = hj_comm_rank(ctx); break;
    case Expr::Kind::World: r.i = hj_comm_world(ctx); break;
    case Expr::Kind::Op: {
      DType t = plan.exprs[e.a.index].type;
      if (e.op == OpCode::Select) {
        r = regs[e.a.index].i ? regs[e.b.index] : regs[e.c.index];
      } else if (opArity(e.op) == 1) {
        const PlanReg &x = regs[e.a.index];
        int64_t in = isFloat(t) ? 0 : x.i;
        double fin = t == DType::f32 ? static_cast<double>(x.f32) : t == DType::f64 ? x.f : 0.0, out = 0;
        if (ScalarError err = evalUnaryOp(e.op, t, in, fin, &r.i, &out); err != ScalarError::None) {
          std::string msg = scalarErrorText(err, e.type) + " computing " + plan.exprNames[i];
          return hj_fail(ctx, HJ_ERR_INVALID_ARGUMENT, msg.c_str());
        }
        if (e.type == DType::f32) r.f32 = static_cast<float>(out);
        else if (e.type == DType::f64) r.f = out;
      } else if (t == DType::f32) {
        evalF32Op(e.op, regs[e.a.index].f32, regs[e.b.index].f32, &r.f32, &r.i);
      } else if (isFloat(t)) {
        evalFloatOp(e.op, t, regs[e.a.index].f, regs[e.b.index].f, &r.f, &r.i);
      } else if (ScalarError err = evalIntOp(e.op, t, regs[e.a.index].i, regs[e.b.index].i, &r.i);
                 err != ScalarError::None) {
        std::string msg = scalarErrorText(err, e.type) + " computing " + plan.exprNames[i];
        return hj_fail(ctx, HJ_ERR_INVALID_ARGUMENT, msg.c_str());
      }
      break;
    }
  }
  return HJ_OK;
}

}  // namespace

int32_t evaluateExprs(const Plan &plan, hj_context *ctx, const DLTensor *const *inputs, const hj_value *scalars,
                      PlanReg *regs, bool checks) {
  for (size_t i = 0; i < plan.exprs.size(); ++i)
    if (!plan.exprLoop[i].valid())
      if (int32_t st = evaluateOne(plan, i, ctx, inputs, scalars, nullptr, regs)) return st;
  if (!checks) return HJ_OK;
  for (const PlanCheck &c : plan.checks)
    if (regs[c.expr.index].i != c.value) return hj_fail(ctx, HJ_ERR_INVALID_ARGUMENT, c.message.c_str());

  return HJ_OK;
}

int32_t evaluateLoopExprs(const Plan &plan, LoopRef loop, hj_context *ctx, const int64_t *indices, PlanReg *regs) {
  for (ExprRef e : plan.loops[loop.index].exprs)
    if (int32_t st = evaluateOne(plan, e.index, ctx, nullptr, nullptr, indices, regs)) return st;
  return HJ_OK;
}

uint64_t exprArgBits(const PlanReg &r, int32_t param) {
  uint64_t bits = 0;
  switch (param) {
    case HJ_PARAM_I32: {
      int32_t v = static_cast<int32_t>(r.i);
      std::memcpy(&bits, &v, 4);
      break;
    }
    case HJ_PARAM_F32: std::memcpy(&bits, &r.f32, 4); break;
    case HJ_PARAM_F64: std::memcpy(&bits, &r.f, 8); break;
    case HJ_PARAM_BOOL: bits = r.i != 0; break;
    default: std::memcpy(&bits, &r.i, 8); break;
  }
  return bits;
}

}  // namespace hostjit
