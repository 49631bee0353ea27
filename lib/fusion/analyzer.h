// analyzer.h - the fusion analysis's one class, shared by the files that
// define it: the fusion as a whole (analysis.cpp), expressions and shapes in
// a segment's scope (analysis_scope.cpp), and each segment's tensors,
// launch or matmul (analysis_segments.cpp).
#pragma once

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "hostjit/fusion/analysis.h"

namespace hostjit::fusion::analysis_detail {

inline bool isIdentifier(const std::string &s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

inline std::string idx(const std::string &field, size_t i) { return field + "[" + std::to_string(i) + "]"; }

// The extents an integer literal fixes.
inline std::vector<std::optional<int64_t>> literalDims(const std::vector<SizeExpr> &extents) {
  std::vector<std::optional<int64_t>> dims;
  for (const SizeExpr &e : extents)
    dims.push_back(e.valid() && e.kind() == SizeExpr::Kind::Int ? std::optional<int64_t>(e.intValue()) : std::nullopt);
  return dims;
}

// Checks a Fusion and resolves it into a FusionAnalysis (analyzeFusion).
class Analyzer {
 public:
  explicit Analyzer(const Fusion &f) : f_(f) {}
  Expected<FusionAnalysis> run();

 private:
  // The fusion as a whole (analysis.cpp).
  void error(const std::string &path, const std::string &msg);
  // A name for the lowered program that no other value has.
  std::string unique(const std::string &want);
  void checkInputs();
  void checkKernels();
  void checkOutputs();
  // Last uses, then each buffer's free after the segment of its last use.
  void schedule();

  // One segment's scope (analysis_scope.cpp).
  struct Found {
    bool ok = false;
    DType dtype = DType::f32;
    uint32_t rank = 0;
    std::vector<std::optional<int64_t>> dims;  // each dim when the fusion fixes it
  };
  // A tensor of segment `seg` by name: a summary entry, or a global tensor.
  // `visible` limits which local names count (those defined so far).
  Found findTensor(size_t seg, const std::string &name, const std::set<std::string> &visible) const;
  // Types an expression; nullopt after reporting at `path`.
  std::optional<ExprType> type(size_t seg, const SizeExpr &e, const std::string &path,
                               const std::set<std::string> &visible);
  // Extents, strides and launch dims: i64 expressions (or integer literals);
  // one that is constant must lie in [min, max] (what the runtime accepts).
  // Returns its value when it is constant.
  std::optional<int64_t> sizeExpr(size_t seg, const SizeExpr &e, const std::string &path,
                                  const std::set<std::string> &visible, int64_t min, const char *what,
                                  int64_t max = INT64_MAX);
  void shape(size_t seg, const TensorSpec &t, const std::string &path, const std::set<std::string> &visible);

  // Each segment (analysis_segments.cpp): its tensors, then its launch or matmul.
  void segment(size_t i);
  // A segment that is a matmul: its inputs A, B (and the bias), one output
  // C, nothing of a kernel's.
  void matmulSegment(size_t i, const Segment &s, SegmentPlan &sp, const std::string &path,
                     const std::set<std::string> &visible);
  // Its dims, where the fusion fixes them: none 0, A's columns B's rows,
  // the output op(A) op(B), the bias op(B)'s columns.
  void matmulShapes(const Segment &s, const MatmulSpec &m, const std::string &path, const Found &a, const Found &b,
                    const Found &c, const Found &bias);

  const Fusion &f_;
  FusionAnalysis a_;
  std::vector<std::string> errors_;
  std::set<std::string> used_, allNames_;
};

}  // namespace hostjit::fusion::analysis_detail
