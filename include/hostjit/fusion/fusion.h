// fusion.h - a segmented fusion as a GPU compiler hands it over: inputs,
// outputs, kernels, and an ordered list of segments, each with its kernel
// summary (the global buffers it needs); loaded from C++ or from JSON
// (docs/fusion-json.md), lowered to Host IR (lowering.h) or run segment by
// segment (kernel_executor.h).
#pragma once

#include <array>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hostjit/ir/error.h"
#include "hostjit/ir/ir.h"
#include "hostjit/ir/types.h"

namespace hostjit {

// An expression over the sizes and strides of tensors and the fusion's
// scalar inputs: "ceildiv(size(x, 0) * size(x, 1), 256)". Integer
// arithmetic is i64 with Host IR's semantics (scalar_semantics.h); a float
// literal or f32/f64 scalar input makes a float expression (kernel scalar
// arguments only); every other Host IR scalar operation is a function of
// the same name ("to_i32(n)", "select(lt(n, 64), 1, 2)") with the IR's
// typing. Immutable; copies share their nodes.
class SizeExpr {
 public:
  enum class Kind : uint8_t { Int, Float, Scalar, Size, Stride, Op };

  SizeExpr() = default;
  SizeExpr(int64_t v) : SizeExpr(integer(v)) {}  // NOLINT: literals read naturally
  static SizeExpr integer(int64_t v);
  static SizeExpr floating(double v);
  static SizeExpr scalar(std::string name);
  static SizeExpr size(std::string tensor, uint32_t dim);
  static SizeExpr stride(std::string tensor, uint32_t dim);
  // Any scalar operation but size and stride, with opArity(op) operands.
  // Throws ApiMisuse for size, stride, a wrong count or an empty operand.
  static SizeExpr op(OpCode op, std::vector<SizeExpr> operands);
  static SizeExpr binary(OpCode op, SizeExpr a, SizeExpr b) { return SizeExpr::op(op, {std::move(a), std::move(b)}); }

  // Parses the text form; on error the message gives the column (1-based).
  static Expected<SizeExpr> parse(std::string_view text);
  // The text form, which parse() reads back to an equal expression.
  std::string str() const;

  bool valid() const { return node_ != nullptr; }
  Kind kind() const;
  int64_t intValue() const;
  double floatValue() const;
  const std::string &name() const;  // Scalar: the input; Size/Stride: the tensor
  uint32_t dim() const;
  OpCode op() const;
  const std::vector<SizeExpr> &operands() const;  // Op: opArity(op()) of them

 private:
  struct Node;
  explicit SizeExpr(std::shared_ptr<const Node> n) : node_(std::move(n)) {}
  std::shared_ptr<const Node> node_;
};

struct SizeExpr::Node {
  Kind kind = Kind::Int;
  int64_t i = 0;
  double f = 0.0;
  std::string name;
  uint32_t dim = 0;
  OpCode op = OpCode::Add;
  std::vector<SizeExpr> operands;
};

inline SizeExpr::Kind SizeExpr::kind() const { return node_->kind; }
inline int64_t SizeExpr::intValue() const { return node_->i; }
inline double SizeExpr::floatValue() const { return node_->f; }
inline const std::string &SizeExpr::name() const { return node_->name; }
inline uint32_t SizeExpr::dim() const { return node_->dim; }
inline OpCode SizeExpr::op() const { return node_->op; }
inline const std::vector<SizeExpr> &SizeExpr::operands() const { return node_->operands; }

SizeExpr operator+(SizeExpr a, SizeExpr b);
SizeExpr operator-(SizeExpr a, SizeExpr b);
SizeExpr operator*(SizeExpr a, SizeExpr b);
SizeExpr ceildiv(SizeExpr a, SizeExpr b);

// A fusion input: a tensor (dtype, dims; kDynamic for a dynamic dim) or a
// scalar (dtype only: i64, i32, f32, f64 or bool).
struct FusionInput {
  std::string name;
  bool isTensor = true;
  DType dtype = DType::f32;
  std::vector<int64_t> dims;
};

// A tensor a segment produces (an output) or needs (a kernel-summary entry).
struct TensorSpec {
  std::string name;
  DType dtype = DType::f32;
  std::vector<SizeExpr> extents;
  std::vector<SizeExpr> strides;  // empty: contiguous; a 0 stride is an expanded dim (no memory)
  // Summary entries: the kernel needs the memory zeroed when it starts;
  // with resetsToZero the kernel also promises to leave it zero (the
  // allocation contract: zeroed arena, no memset in steady state).
  bool zeroInit = false;
  bool resetsToZero = false;
  // A view of another tensor: no buffer, no memory. On an output it names
  // one of the segment's inputs (the segment only permutes or reshapes it,
  // and launches nothing); on a summary entry, a tensor of the segment (an
  // input, an output or another entry) whose memory the kernel reuses: it
  // is then not a kernel parameter either.
  std::string aliasOf;
  // An output's view starts this many elements past the start of the
  // tensor it views (a slice, as reinterpret_tensor makes); 0 otherwise.
  SizeExpr offset = SizeExpr::integer(0);
};

// A fusion's kernels are Host IR kernel declarations (hostjit::Kernel).
// Parameters are, in order, the segment's inputs, outputs, intermediates
// (summary entries that are not aliases and not outputs) and scalars: the
// order nvFuser kernels take. CUDA paths are relative to the fusion file.

// A segment that is a library call instead of a kernel (nvFuser's
// expression-evaluated matmul and linear segments): its output is
// inputs[0] @ inputs[1] (each transposed where asked), times alpha, plus
// inputs[2] over the output's columns when `bias`. The library's workspace
// is allocated for the call, workspaceBytes of it.
struct MatmulSpec {
  bool transposeA = false, transposeB = false, bias = false;
  double alpha = 1.0;
  SizeExpr workspaceBytes = 0;
};

struct Segment {
  std::string name;
  std::optional<std::string> kernel;  // absent: every output is an alias, nothing is launched
  std::optional<MatmulSpec> matmul;   // instead of a kernel: a library call
  std::vector<std::string> inputs;    // fusion inputs or outputs of earlier segments
  std::vector<TensorSpec> outputs;
  // The kernel summary: every global buffer the kernel uses besides its
  // inputs. An entry named like one of the segment's outputs is that output
  // (nvFuser lists outputs among its global allocations): its flags go to
  // the output's allocation, and it is passed once, as the output.
  std::vector<TensorSpec> summary;
  std::vector<SizeExpr> scalars;  // the kernel's scalar arguments, in order
  // Buffers the kernel takes after its scalars (Triton's global and profile
  // scratch pointers): allocated for the launch, freed after it, never
  // supplied by a caller. Fields as a summary entry's, without alias_of.
  std::vector<TensorSpec> scratch;
  std::array<SizeExpr, 3> grid{1, 1, 1}, block{1, 1, 1};
  SizeExpr smem = 0;
};

struct Fusion {
  std::string name = "main";  // the lowered function's name
  std::string file;           // where it was loaded from ("" when built); CUDA paths are relative to it
  std::vector<FusionInput> inputs;
  std::vector<std::string> outputs;  // names of segment outputs, returned in this order
  std::vector<Kernel> kernels;
  std::vector<Segment> segments;
};

// Reads a fusion from JSON (docs/fusion-json.md). Every error names the
// file and the JSON path of the bad field and says what was expected:
// "f.json: segments[2].summary[1].extents[0]: unknown tensor 'q'".
Expected<Fusion> parseFusionJson(std::string_view text, const std::string &filename);
Expected<Fusion> loadFusionJson(const std::string &path);

// Checks a fusion: names, references, types, kernel parameter lists against
// what each segment passes. Every problem is reported, one per line, each
// with its path in the JSON schema's terms. lowerFusion and KernelExecutor
// call it; a fusion that passes lowers to a program that verifies.
Expected<void> checkFusion(const Fusion &f);

}  // namespace hostjit
