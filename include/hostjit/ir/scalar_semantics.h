// scalar_semantics.h - the meaning of every scalar operation, in one place:
// constant folding and the evaluator call these; jit/ emits the same
// operations and the parity tests hold it to them.
//
// Integers (i64, i32, and bool as 0/1) are held in int64_t (i32
// sign-extended). add, sub and mul whose result does not fit the type are
// errors (integer overflow): a size that wrapped would allocate a buffer
// smaller than the program meant. div truncates toward zero; mod has
// the sign of the dividend; ceildiv(a, b) = a / b, plus one when the
// remainder is non-zero and a and b have the same sign. Division, mod and
// ceildiv by zero, and MIN / -1, are errors. min(a, b) = b < a ? b : a and
// max(a, b) = a < b ? b : a, for floats too (NaN picks a).
// Floats are held in double; f32 operations are done in float.
// Comparisons give bool (0 or 1).
#pragma once

#include <cstdint>

#include "hostjit/ir/ir.h"

namespace hostjit {

enum class ScalarError : uint8_t { None, DivisionByZero, DivisionOverflow, Overflow };

ScalarError evalIntOp(OpCode op, DType type, int64_t a, int64_t b, int64_t *out);
// Arith ops on floats give a float (in *f); comparisons give bool (in *i).
void evalFloatOp(OpCode op, DType type, double a, double b, double *f, int64_t *i);
// f32 operations on floats themselves, so operands passed through unchanged
// (min, max) keep their exact bits, NaN payloads included, as in the JIT.
void evalF32Op(OpCode op, float a, float b, float *f, int64_t *i);
// Wraps an int64 to the width of an integer scalar type.
int64_t wrapTo(DType type, int64_t v);
const char *scalarErrorText(ScalarError e);

}  // namespace hostjit
