// lowering.h - a segmented fusion lowered to a Host IR program.
#pragma once

#include "hostjit/fusion/fusion.h"
#include "hostjit/ir/ir.h"

namespace hostjit {

// Lowers f to one function named f.name, taking f's inputs in order and
// returning f's outputs. For each segment, in order: allocate its outputs
// (not aliases: a view instead; not a fusion output a segment before
// already allocated), allocate each summary entry that is not an alias or an
// output with exactly its flags (zero_init, resets_to_zero), launch with the
// arguments in the kernel's order (inputs, outputs, intermediates, scalars),
// free the intermediates, then free each buffer whose last use this segment
// was. Fusion inputs and outputs are never freed. Kernels keep their CUDA
// paths as written (relative to f.file, which becomes the program's file).
// The program verifies; errors are checkFusion's.
Expected<Program> lowerFusion(const Fusion &f);

}  // namespace hostjit
