// lowering.h - a segmented fusion lowered to a Host IR program, and one
// segment of it lowered alone (for KernelExecutor).
#pragma once

#include <array>
#include <vector>

#include "hostjit/fusion/analysis.h"
#include "hostjit/fusion/fusion.h"
#include "hostjit/ir/ir.h"
#include "hostjit/text/text.h"

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
// Every statement that computes a size says which JSON field it comes from
// (its origin: "f.json: segments[2].summary[0].extents[0]"), so messages
// about it name the field. The program verifies; errors are checkFusion's.
// With `comments`, the first statement of each segment says which it is
// ("segments[1] (reduce): kernel @row_sum_grid"), for the printed program.
Expected<Program> lowerFusion(const Fusion &f, ProgramComments *comments = nullptr);

// Segment `segment` of f as a program of its own. Its tensor inputs are,
// in order, the segment's inputs, its outputs and, when `supplied`, its
// intermediates (all with dynamic dims; outputs and intermediates are seen
// through views of their specs, so only their memory is taken from the
// tensors given); its scalar inputs are the fusion's. It makes the runtime
// calls the lowered fusion makes for the segment itself: allocate the
// intermediates (unless supplied), launch, free them; it returns nothing.
// Alongside, the expressions of each output's and each intermediate's
// extents and explicit strides (empty: contiguous), of the launch's grid,
// block and shared memory, and of each scalar argument (as its parameter's
// type), for makePlan's `keep`.
struct SegmentProgram {
  struct Shape {
    std::vector<Operand> extents, strides, offset;  // offset: a view's, when not 0 (one entry)
    std::vector<ExprId> extentExprs, strideExprs, offsetExprs;
  };
  Program program;
  std::vector<Shape> outputs, intermediates;
  std::array<ExprId, 7> dims{};
  std::vector<ExprId> scalars;
};
Expected<SegmentProgram> lowerSegment(const Fusion &f, const fusion::FusionAnalysis &a, size_t segment, bool supplied);

}  // namespace hostjit
