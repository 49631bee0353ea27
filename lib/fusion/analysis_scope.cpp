// analysis_scope.cpp - the fusion analysis in one segment's scope: the
// tensors it sees, the types of its expressions, its tensor shapes.
#include "analyzer.h"

#include "hostjit/ir/scalar_semantics.h"
#include "hostjit/runtime.h"

namespace hostjit::fusion::analysis_detail {

Analyzer::Found Analyzer::findTensor(size_t seg, const std::string &name,
                                     const std::set<std::string> &visible) const {
  Found r;
  if (!visible.count(name)) return r;
  const Segment &s = f_.segments[seg];
  for (const TensorSpec &e : s.summary)
    if (e.name == name) return {true, e.dtype, static_cast<uint32_t>(e.extents.size()), literalDims(e.extents)};
  for (const TensorSpec &o : s.outputs)
    if (o.name == name) return {true, o.dtype, static_cast<uint32_t>(o.extents.size()), literalDims(o.extents)};
  if (auto it = a_.tensors.find(name); it != a_.tensors.end()) {
    const TensorInfo &t = it->second;
    Found found{true, t.dtype, t.rank, std::vector<std::optional<int64_t>>(t.rank)};
    if (t.spec) found.dims = literalDims(t.spec->extents);
    for (const FusionInput &in : f_.inputs)
      if (!t.spec && in.name == name && in.dims.size() == t.rank)
        for (size_t d = 0; d < in.dims.size(); ++d)
          if (in.dims[d] != kDynamic) found.dims[d] = in.dims[d];
    return found;
  }
  return r;
}

std::optional<ExprType> Analyzer::type(size_t seg, const SizeExpr &e, const std::string &path,
                                       const std::set<std::string> &visible) {
  if (!e.valid()) {
    error(path, "missing expression");
    return std::nullopt;
  }
  switch (e.kind()) {
    case SizeExpr::Kind::Int: return ExprType{DType::i64, true};
    case SizeExpr::Kind::Float: return ExprType{DType::f64, true};
    case SizeExpr::Kind::Scalar: {
      auto it = a_.scalars.find(e.name());
      if (it == a_.scalars.end()) {
        error(path, (a_.tensors.count(e.name()) ? "'" + e.name() + "' is a tensor; use size(" + e.name() + ", dim)"
                                                : "unknown scalar input '" + e.name() + "'"));
        return std::nullopt;
      }
      return ExprType{a_.scalarTypes[it->second], false};
    }
    case SizeExpr::Kind::Size:
    case SizeExpr::Kind::Stride: {
      Found t = findTensor(seg, e.name(), visible);
      if (!t.ok) {
        bool known = a_.tensors.count(e.name()) || allNames_.count(e.name());
        error(path, known ? "tensor '" + e.name() + "' is not available here (a segment's expressions see its "
                                "inputs, its outputs and its summary entries defined before)"
                          : "unknown tensor '" + e.name() + "'");
        return std::nullopt;
      }
      if (e.dim() >= t.rank) {
        error(path, "'" + e.name() + "' has rank " + std::to_string(t.rank) + "; dim " + std::to_string(e.dim()) +
                        " does not exist");
        return std::nullopt;
      }
      return ExprType{DType::i64, false};
    }
    case SizeExpr::Kind::Op: {
      const std::vector<SizeExpr> &x = e.operands();
      std::vector<OperandType> in;
      bool allLiteral = true;
      for (const SizeExpr &o : x) {
        auto t = type(seg, o, path, visible);
        if (!t) return std::nullopt;
        in.push_back(OperandType{false, t->isLiteral, t->dtype});
        allLiteral = allLiteral && t->isLiteral;
      }
      if (e.op() == OpCode::Div || e.op() == OpCode::Mod || e.op() == OpCode::CeilDiv)
        if (auto d = foldLiterals(x[1]); d && d->kind == Operand::Kind::Int && d->i == 0) {
          error(path, "division by zero in '" + e.str() + "'");
          return std::nullopt;
        }
      // The IR's typing rule (opType), in this format's words.
      OpType ot = opType(e.op(), in);
      const OperandType &culprit = in[static_cast<size_t>(ot.culprit)];
      size_t first = in.size() == 3 ? 1 : 0;
      switch (ot.rule) {
        case TypeRule::Ok: break;
        case TypeRule::FloatLiteralInInteger:
          error(path, "a float literal meets an integer (" + std::string(dtypeName(ot.operands)) + ") in '" + e.str() + "'");
          return std::nullopt;
        case TypeRule::MixedTypes:
          error(path, std::string("operands of different types (") + dtypeName(in[first].dtype) + " and " +
                          dtypeName(in[first + 1].dtype) + ") in '" + e.str() + "'");
          return std::nullopt;
        case TypeRule::BoolArithmetic:
        case TypeRule::BoolOrder:
          error(path, "arithmetic on bool in '" + e.str() + "'");
          return std::nullopt;
        case TypeRule::IntegerOnly:
          error(path, std::string(opName(e.op())) + " takes integers, not floats, in '" + e.str() + "'");
          return std::nullopt;
        case TypeRule::FloatOnly:
          error(path, std::string(opName(e.op())) + " takes a float, not " + dtypeName(culprit.dtype) + ", in '" +
                          e.str() + "'");
          return std::nullopt;
        case TypeRule::ConditionNotBool:
          error(path, std::string("the condition of select must be a comparison, not ") +
                          (culprit.isLiteral ? "a literal" : dtypeName(culprit.dtype)) + ", in '" + e.str() + "'");
          return std::nullopt;
      }
      // Arithmetic on literals alone folds to a literal; any other
      // operation is computed by the program, with its type.
      bool folds = allLiteral && (opClass(e.op()) == OpClass::Arith || opClass(e.op()) == OpClass::IntArith);
      if (folds) {
        std::string why;
        if (!foldLiterals(e, &why)) {
          error(path, why + " in '" + e.str() + "'");
          return std::nullopt;
        }
      }
      return ExprType{ot.type, folds};
    }
  }
  return std::nullopt;
}

std::optional<int64_t> Analyzer::sizeExpr(size_t seg, const SizeExpr &e, const std::string &path,
                                          const std::set<std::string> &visible, int64_t min, const char *what,
                                          int64_t max) {
  auto t = type(seg, e, path, visible);
  if (!t) return std::nullopt;
  if (t->dtype != DType::i64) {
    error(path, "expected an i64 expression, got " + std::string(t->isLiteral ? "a float literal" : dtypeName(t->dtype)) +
                    " ('" + e.str() + "')");
    return std::nullopt;
  }
  auto c = foldLiterals(e);
  if (!c || c->kind != Operand::Kind::Int) return std::nullopt;
  std::string written = e.kind() == SizeExpr::Kind::Int ? "" : " ('" + e.str() + "')";
  if (c->i < min) {
    error(path, std::string(what) + " must be >= " + std::to_string(min) + ", got " + std::to_string(c->i) + written);
    return std::nullopt;
  }
  if (c->i > max) {
    error(path, std::string(what) + " must be <= " + std::to_string(max) + ", got " + std::to_string(c->i) + written);
    return std::nullopt;
  }
  return c->i;
}

void Analyzer::shape(size_t seg, const TensorSpec &t, const std::string &path, const std::set<std::string> &visible) {
  bool rankOk = t.extents.size() <= kMaxRank;
  if (!rankOk) error(path + ".extents", "rank " + std::to_string(t.extents.size()) + "; the limit is 8");
  std::vector<int64_t> sizes, strides;  // the constant ones
  for (size_t d = 0; d < t.extents.size(); ++d)
    if (auto c = sizeExpr(seg, t.extents[d], path + idx(".extents", d), visible, 0, "an extent")) sizes.push_back(*c);
  bool stridesOk = t.strides.empty() || t.strides.size() == t.extents.size();
  if (!stridesOk)
    error(path + ".strides", std::to_string(t.strides.size()) + " strides for " + std::to_string(t.extents.size()) +
                                 " extents");
  for (size_t d = 0; d < t.strides.size(); ++d)
    if (auto c = sizeExpr(seg, t.strides[d], path + idx(".strides", d), visible, 0, "a stride")) strides.push_back(*c);
  sizeExpr(seg, t.offset, path + ".offset", visible, 0, "an offset");
  // All constant: the size is known now, and must fit.
  uint64_t bytes = 0;
  if (t.aliasOf.empty() && rankOk && stridesOk && sizes.size() == t.extents.size() &&
      strides.size() == t.strides.size() && !bufferBytes(sizes, strides, dtypeBytes(t.dtype), &bytes))
    error(path + ".extents", "the buffer holds more than 2^62 bytes of " + std::string(dtypeName(t.dtype)) +
                                 ": its size overflows");
}

}  // namespace hostjit::fusion::analysis_detail
