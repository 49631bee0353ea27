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
//
// Conversions: an integer or bool to an integer keeps its value, and one
// that does not fit i32 is an error (to_i32); a float to an integer
// truncates toward zero, and a NaN or a value whose truncation does not fit
// is an error; an integer to a float and f64 to f32 round to nearest (even);
// f32 to f64 is exact. sqrt and rsqrt (1 / sqrt, each step rounded) follow
// IEEE 754 in the operand's type. select takes no part here: it picks an
// operand.
#pragma once

#include <cstdint>
#include <string>

#include "hostjit/ir/ir.h"

namespace hostjit {

enum class ScalarError : uint8_t { None, DivisionByZero, DivisionOverflow, Overflow, OutOfRange, NotANumber };

ScalarError evalIntOp(OpCode op, DType type, int64_t a, int64_t b, int64_t *out);
// Arith ops on floats give a float (in *f); comparisons give bool (in *i).
void evalFloatOp(OpCode op, DType type, double a, double b, double *f, int64_t *i);
// f32 operations on floats themselves, so operands passed through unchanged
// (min, max) keep their exact bits, NaN payloads included, as in the JIT.
void evalF32Op(OpCode op, float a, float b, float *f, int64_t *i);
// A conversion or a float function (class Convert or Math) of a value of
// type `from`: an integer (or bool) in i, a float in f (an f32 exactly).
// The result is written to *outI when it is an integer, else to *outF (an
// f32 result rounded to float, so it converts to float exactly).
ScalarError evalUnaryOp(OpCode op, DType from, int64_t i, double f, int64_t *outI, double *outF);
// Wraps an int64 to the width of an integer scalar type.
int64_t wrapTo(DType type, int64_t v);
// What went wrong, for an operation whose result has type `result`
// ("integer overflow", "value does not fit i32").
std::string scalarErrorText(ScalarError e, DType result = DType::i64);

}  // namespace hostjit
