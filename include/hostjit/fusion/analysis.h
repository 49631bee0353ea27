// analysis.h - the checked, resolved form of a Fusion that lowering and
// KernelExecutor both follow: which tensors each segment allocates, views,
// passes and frees, with which flags, in which order. One analysis, two
// executions: the lowered program and the segment-by-segment path make the
// same runtime calls because both walk this.
#pragma once

#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "hostjit/fusion/fusion.h"

namespace hostjit::fusion {

enum class TensorKind : uint8_t { Input, Buffer, View };

// A tensor visible across segments: a fusion input or a segment output.
struct TensorInfo {
  std::string name;
  TensorKind kind = TensorKind::Input;
  DType dtype = DType::f32;
  uint32_t rank = 0;
  int segment = -1;            // the segment that makes it; -1 for fusion inputs
  uint32_t inputIndex = 0;     // fusion inputs: position among the tensor inputs
  const TensorSpec *spec = nullptr;  // buffers and views: extents and strides (owned by the Fusion)
  std::string base, root;      // views: the viewed tensor, and the input or buffer whose memory it is
  uint32_t flags = 0;          // buffers: HJ_ALLOC_* (HJ_ALLOC_OUTPUT for fusion outputs)
  bool fusionOutput = false;
  int lastUse = -1;            // buffers: the last segment that uses its memory
};

// A summary entry that gets its own buffer.
struct Intermediate {
  size_t entry = 0;      // index in Segment::summary
  std::string irName;    // its unique name in the lowered program and in records
  uint32_t flags = 0;    // HJ_ALLOC_ZERO_INIT / HJ_ALLOC_RESETS_TO_ZERO
};

struct SegmentPlan {
  int kernel = -1;                      // index in Fusion::kernels; -1: no kernel launched
  bool matmul = false;                  // a library call instead (Segment::matmul)
  std::vector<std::string> allocs;      // outputs allocated here, in order
  std::vector<std::string> views;       // alias outputs made here, in order
  std::vector<Intermediate> intermediates;
  std::vector<std::string> tensorArgs;  // inputs, outputs, then intermediates (irName), as passed
  // Segment::scratch, passed after the scalars (entry: index in scratch).
  std::vector<Intermediate> scratch;
  std::vector<std::string> frees;       // buffers whose last use is this segment, in allocation order
  // Summary-entry names (as written) to irNames, for expressions of this segment.
  std::unordered_map<std::string, std::string> local;
};

struct FusionAnalysis {
  std::unordered_map<std::string, TensorInfo> tensors;
  std::unordered_map<std::string, uint32_t> scalars;  // name -> position among the scalar inputs
  std::vector<DType> scalarTypes;
  std::vector<SegmentPlan> segments;
};

// Checks f and resolves it; the error lists every problem, one per line,
// each starting with its path ("segments[1].summary[0].extents[2]: ...").
Expected<FusionAnalysis> analyzeFusion(const Fusion &f);

// The type of an expression in a segment's scope, for callers that need
// it after analysis (scalar arguments): its dtype, or for an expression of
// literals alone, i64 (integers) or f64 (floats) with isLiteral set.
struct ExprType {
  DType dtype = DType::i64;
  bool isLiteral = false;
};

// Folds arithmetic on literals alone, with Host IR's semantics (integers
// i64, floats f64): an Int or Float operand, or nullopt when e uses a value
// or an operation other than arithmetic (a conversion, a comparison, select:
// the program computes those, with their types). A division by zero sets
// *error (when given) and gives nullopt.
std::optional<Operand> foldLiterals(const SizeExpr &e, std::string *error = nullptr);

}  // namespace hostjit::fusion
