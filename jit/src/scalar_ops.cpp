// scalar_ops.cpp - LLVM IR for the scalar operations (contract in scalar_ops.h).
#include "scalar_ops.h"

#include <cstdint>

#include "hostjit/ir/error.h"
#include "hostjit/ir/scalar_semantics.h"
#include "llvm/IR/Intrinsics.h"

namespace hostjit::jit {

namespace {

using llvm::Value;

llvm::Type *floatType(llvm::IRBuilder<> &b, DType t) { return t == DType::f32 ? b.getFloatTy() : b.getDoubleTy(); }

Value *floatOp(llvm::IRBuilder<> &b, OpCode op, Value *x, Value *y) {
  llvm::Type *i64 = b.getInt64Ty();
  switch (op) {
    case OpCode::Add: return b.CreateFAdd(x, y);
    case OpCode::Sub: return b.CreateFSub(x, y);
    case OpCode::Mul: return b.CreateFMul(x, y);
    case OpCode::Div: return b.CreateFDiv(x, y);
    case OpCode::Min: return b.CreateSelect(b.CreateFCmpOLT(y, x), y, x);
    case OpCode::Max: return b.CreateSelect(b.CreateFCmpOLT(x, y), y, x);
    case OpCode::Eq: return b.CreateZExt(b.CreateFCmpOEQ(x, y), i64);
    case OpCode::Ne: return b.CreateZExt(b.CreateFCmpUNE(x, y), i64);
    case OpCode::Lt: return b.CreateZExt(b.CreateFCmpOLT(x, y), i64);
    case OpCode::Le: return b.CreateZExt(b.CreateFCmpOLE(x, y), i64);
    case OpCode::Gt: return b.CreateZExt(b.CreateFCmpOGT(x, y), i64);
    case OpCode::Ge: return b.CreateZExt(b.CreateFCmpOGE(x, y), i64);
    default: HOSTJIT_INVARIANT(!"integer-only op on floats");
  }
  return nullptr;
}

Value *intOp(llvm::IRBuilder<> &b, const Plan &plan, size_t i, Value *x, Value *y, const FailIf &failIf) {
  const Expr &e = plan.exprs[i];
  DType t = plan.exprs[e.a.index].type;
  const std::string &what = plan.exprNames[i];
  llvm::Type *i64 = b.getInt64Ty();
  Value *r = nullptr;
  switch (e.op) {
    case OpCode::Add:
    case OpCode::Sub:
    case OpCode::Mul: {
      // Checked: a size that wrapped would allocate less than the program
      // meant.
      llvm::Intrinsic::ID id = e.op == OpCode::Add   ? llvm::Intrinsic::sadd_with_overflow
                               : e.op == OpCode::Sub ? llvm::Intrinsic::ssub_with_overflow
                                                     : llvm::Intrinsic::smul_with_overflow;
      Value *pair = b.CreateBinaryIntrinsic(id, x, y);
      r = b.CreateExtractValue(pair, 0);
      Value *over = b.CreateExtractValue(pair, 1);
      if (t == DType::i32)
        over = b.CreateOr(over, b.CreateICmpNE(b.CreateSExt(b.CreateTrunc(r, b.getInt32Ty()), i64), r));
      failIf(over, scalarErrorText(ScalarError::Overflow) + " computing " + what);
      return r;
    }
    case OpCode::Div:
    case OpCode::Mod:
    case OpCode::CeilDiv: {
      // A constant divisor other than 0 and -1 needs neither check.
      const Expr &divisor = plan.exprs[e.b.index];
      bool constant = divisor.kind == Expr::Kind::Const;
      if (!constant || divisor.i == 0)
        failIf(b.CreateICmpEQ(y, b.getInt64(0)), scalarErrorText(ScalarError::DivisionByZero) + " computing " + what);
      int64_t minv = t == DType::i32 ? INT32_MIN : INT64_MIN;
      if (!constant || divisor.i == -1)
        failIf(b.CreateAnd(b.CreateICmpEQ(x, b.getInt64(minv)), b.CreateICmpEQ(y, b.getInt64(-1))),
               scalarErrorText(ScalarError::DivisionOverflow) + " computing " + what);
      Value *q = b.CreateSDiv(x, y);
      if (e.op == OpCode::Div) {
        r = q;
      } else {
        Value *rem = b.CreateSRem(x, y);
        if (e.op == OpCode::Mod) {
          r = rem;
        } else {
          Value *sameSign = b.CreateICmpEQ(b.CreateICmpSLT(x, b.getInt64(0)), b.CreateICmpSLT(y, b.getInt64(0)));
          Value *adj = b.CreateAnd(b.CreateICmpNE(rem, b.getInt64(0)), sameSign);
          r = b.CreateAdd(q, b.CreateZExt(adj, i64));
        }
      }
      break;
    }
    case OpCode::Min: return b.CreateSelect(b.CreateICmpSLT(y, x), y, x);
    case OpCode::Max: return b.CreateSelect(b.CreateICmpSLT(x, y), y, x);
    case OpCode::Eq: return b.CreateZExt(b.CreateICmpEQ(x, y), i64);
    case OpCode::Ne: return b.CreateZExt(b.CreateICmpNE(x, y), i64);
    case OpCode::Lt: return b.CreateZExt(b.CreateICmpSLT(x, y), i64);
    case OpCode::Le: return b.CreateZExt(b.CreateICmpSLE(x, y), i64);
    case OpCode::Gt: return b.CreateZExt(b.CreateICmpSGT(x, y), i64);
    case OpCode::Ge: return b.CreateZExt(b.CreateICmpSGE(x, y), i64);
    default: HOSTJIT_INVARIANT(!"not a binary integer op");
  }
  if (t == DType::i32) r = b.CreateSExt(b.CreateTrunc(r, b.getInt32Ty()), i64);
  return r;
}

// A conversion: checked where a value may not fit the target.
Value *convert(llvm::IRBuilder<> &b, const Plan &plan, size_t i, Value *x, const FailIf &failIf) {
  const Expr &e = plan.exprs[i];
  DType from = plan.exprs[e.a.index].type, to = e.type;
  const std::string &what = plan.exprNames[i];
  if (isFloat(to)) {
    if (!isFloat(from)) return b.CreateSIToFP(x, floatType(b, to));
    if (from == to) return x;
    return to == DType::f64 ? b.CreateFPExt(x, b.getDoubleTy()) : b.CreateFPTrunc(x, b.getFloatTy());
  }
  if (isFloat(from)) {
    // The evaluator's bounds, compared in double (exact for both types).
    Value *d = from == DType::f32 ? b.CreateFPExt(x, b.getDoubleTy()) : x;
    failIf(b.CreateFCmpUNO(d, d), scalarErrorText(ScalarError::NotANumber, to) + " computing " + what);
    Value *fits = to == DType::i32
                      ? b.CreateAnd(b.CreateFCmpOGT(d, llvm::ConstantFP::get(b.getDoubleTy(), -2147483649.0)),
                                    b.CreateFCmpOLT(d, llvm::ConstantFP::get(b.getDoubleTy(), 2147483648.0)))
                      : b.CreateAnd(b.CreateFCmpOGE(d, llvm::ConstantFP::get(b.getDoubleTy(), -0x1p63)),
                                    b.CreateFCmpOLT(d, llvm::ConstantFP::get(b.getDoubleTy(), 0x1p63)));
    failIf(b.CreateNot(fits), scalarErrorText(ScalarError::OutOfRange, to) + " computing " + what);
    return b.CreateFPToSI(d, b.getInt64Ty());
  }
  if (to == DType::i32 && from == DType::i64)
    failIf(b.CreateICmpNE(b.CreateSExt(b.CreateTrunc(x, b.getInt32Ty()), b.getInt64Ty()), x),
           scalarErrorText(ScalarError::OutOfRange, to) + " computing " + what);
  return x;
}

}  // namespace

Value *emitScalarOp(llvm::IRBuilder<> &b, const Plan &plan, size_t i, std::span<Value *const> operands,
                    const FailIf &failIf) {
  const Expr &e = plan.exprs[i];
  HOSTJIT_INVARIANT(e.kind == Expr::Kind::Op && operands.size() == opArity(e.op));
  DType t = plan.exprs[e.a.index].type;
  switch (opClass(e.op)) {
    case OpClass::Select: return b.CreateSelect(b.CreateICmpNE(operands[0], b.getInt64(0)), operands[1], operands[2]);
    case OpClass::Convert: return convert(b, plan, i, operands[0], failIf);
    case OpClass::Math: {
      Value *r = b.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, operands[0]);
      return e.op == OpCode::Rsqrt ? b.CreateFDiv(llvm::ConstantFP::get(floatType(b, t), 1.0), r) : r;
    }
    case OpClass::Query: HOSTJIT_INVARIANT(!"size or stride in a plan"); return nullptr;
    default: break;
  }
  if (isFloat(t)) return floatOp(b, e.op, operands[0], operands[1]);
  return intOp(b, plan, i, operands[0], operands[1], failIf);
}

const char *scalarOpsBuildId() { return __DATE__ " " __TIME__; }

}  // namespace hostjit::jit
