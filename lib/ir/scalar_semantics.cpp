// scalar_semantics.cpp - the one definition of scalar arithmetic (see the header).
#include "hostjit/ir/scalar_semantics.h"

#include <cmath>
#include <cstdint>
#include <limits>

namespace hostjit {

int64_t wrapTo(DType type, int64_t v) {
  if (type == DType::i32) return static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(v)));
  if (type == DType::Bool) return v != 0;
  return v;
}

ScalarError evalIntOp(OpCode op, DType type, int64_t a, int64_t b, int64_t *out) {
  int64_t minv = type == DType::i32 ? std::numeric_limits<int32_t>::min() : std::numeric_limits<int64_t>::min();
  switch (op) {
    case OpCode::Add:
    case OpCode::Sub:
    case OpCode::Mul: {
      int64_t r = 0;
      bool over = op == OpCode::Add   ? __builtin_add_overflow(a, b, &r)
                  : op == OpCode::Sub ? __builtin_sub_overflow(a, b, &r)
                                      : __builtin_mul_overflow(a, b, &r);
      if (over || wrapTo(type, r) != r) return ScalarError::Overflow;
      *out = r;
      return ScalarError::None;
    }
    case OpCode::Div:
    case OpCode::Mod:
    case OpCode::CeilDiv: {
      if (b == 0) return ScalarError::DivisionByZero;
      if (a == minv && b == -1) return ScalarError::DivisionOverflow;
      int64_t q = a / b, r = a % b;
      if (op == OpCode::Div) *out = q;
      else if (op == OpCode::Mod) *out = r;
      else *out = q + ((r != 0 && ((a < 0) == (b < 0))) ? 1 : 0);
      *out = wrapTo(type, *out);
      return ScalarError::None;
    }
    case OpCode::Min: *out = b < a ? b : a; return ScalarError::None;
    case OpCode::Max: *out = a < b ? b : a; return ScalarError::None;
    case OpCode::Eq: *out = a == b; return ScalarError::None;
    case OpCode::Ne: *out = a != b; return ScalarError::None;
    case OpCode::Lt: *out = a < b; return ScalarError::None;
    case OpCode::Le: *out = a <= b; return ScalarError::None;
    case OpCode::Gt: *out = a > b; return ScalarError::None;
    case OpCode::Ge: *out = a >= b; return ScalarError::None;
    default: break;  // not a binary integer operation
  }
  return ScalarError::None;
}

namespace {
template <class T, class Out>
void floatOp(OpCode op, T a, T b, Out *f, int64_t *i) {
  switch (op) {
    case OpCode::Add: *f = static_cast<T>(a + b); return;
    case OpCode::Sub: *f = static_cast<T>(a - b); return;
    case OpCode::Mul: *f = static_cast<T>(a * b); return;
    case OpCode::Div: *f = static_cast<T>(a / b); return;
    case OpCode::Min: *f = b < a ? b : a; return;
    case OpCode::Max: *f = a < b ? b : a; return;
    case OpCode::Eq: *i = a == b; return;
    case OpCode::Ne: *i = a != b; return;
    case OpCode::Lt: *i = a < b; return;
    case OpCode::Le: *i = a <= b; return;
    case OpCode::Gt: *i = a > b; return;
    case OpCode::Ge: *i = a >= b; return;
    default: return;
  }
}
}  // namespace

void evalFloatOp(OpCode op, DType type, double a, double b, double *f, int64_t *i) {
  if (type == DType::f32) floatOp<float, double>(op, static_cast<float>(a), static_cast<float>(b), f, i);
  else floatOp<double, double>(op, a, b, f, i);
}

void evalF32Op(OpCode op, float a, float b, float *f, int64_t *i) { floatOp<float, float>(op, a, b, f, i); }

ScalarError evalUnaryOp(OpCode op, DType from, int64_t i, double f, int64_t *outI, double *outF) {
  if (opClass(op) == OpClass::Math) {
    if (from == DType::f32) {
      float r = std::sqrt(static_cast<float>(f));
      *outF = op == OpCode::Rsqrt ? 1.0f / r : r;
    } else {
      double r = std::sqrt(f);
      *outF = op == OpCode::Rsqrt ? 1.0 / r : r;
    }
    return ScalarError::None;
  }
  DType to = convertTarget(op);
  if (isFloat(to)) {
    if (to == DType::f64) *outF = isFloat(from) ? f : static_cast<double>(i);
    else *outF = isFloat(from) ? static_cast<float>(f) : static_cast<float>(i);
    return ScalarError::None;
  }
  if (isFloat(from)) {
    if (std::isnan(f)) return ScalarError::NotANumber;
    // Bounds that hold exactly in double: the truncation fits when f lies
    // strictly between the type's minimum minus one and its maximum plus one.
    bool fits = to == DType::i32 ? f > -2147483649.0 && f < 2147483648.0 : f >= -0x1p63 && f < 0x1p63;
    if (!fits) return ScalarError::OutOfRange;
    *outI = static_cast<int64_t>(f);
    return ScalarError::None;
  }
  if (to == DType::i32 && wrapTo(DType::i32, i) != i) return ScalarError::OutOfRange;
  *outI = i;
  return ScalarError::None;
}

std::string scalarErrorText(ScalarError e, DType result) {
  switch (e) {
    case ScalarError::DivisionByZero: return "division by zero";
    case ScalarError::DivisionOverflow: return "integer overflow in division";
    case ScalarError::Overflow: return "integer overflow";
    case ScalarError::OutOfRange: return std::string("value does not fit ") + dtypeName(result);
    case ScalarError::NotANumber: return std::string("NaN does not convert to ") + dtypeName(result);
    case ScalarError::None: break;
  }
  return "no error";
}

}  // namespace hostjit
