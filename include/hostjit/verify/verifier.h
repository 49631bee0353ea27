// verifier.h - checks a Program against every rule of Host IR.
//
// Reports all problems, each with its location (or, for built programs, the
// statement's text): use before definition, redefinition, ill-typed scalar
// ops, use after free, double free, freeing a function input or a returned
// value, returning a freed value or an input, buffers neither freed nor
// returned (leaks), launch argument count and types against the kernel
// declaration, launch dims and extents of the wrong kind, resets_to_zero
// without zero_init, return shape against the signature, and kernels
// without an implementation. The evaluator and the JIT refuse programs
// with any diagnostic.
#pragma once

#include "hostjit/ir/diagnostics.h"
#include "hostjit/ir/ir.h"

namespace hostjit {

Diagnostics verify(const Program &p);

}  // namespace hostjit
