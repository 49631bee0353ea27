// analysis.cpp - checks a Fusion and resolves what each segment allocates, passes and frees.
#include "hostjit/fusion/analysis.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>

#include "hostjit/runtime.h"
#include "hostjit/ir/scalar_semantics.h"

namespace hostjit::fusion {

namespace {

bool isIdentifier(const std::string &s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

std::string idx(const std::string &field, size_t i) { return field + "[" + std::to_string(i) + "]"; }

class Analyzer {
 public:
  explicit Analyzer(const Fusion &f) : f_(f) {}

  Expected<FusionAnalysis> run() {
    if (!isIdentifier(f_.name)) error("name", "'" + f_.name + "' is not a valid name (letters, digits, '_')");
    checkInputs();
    checkKernels();
    a_.segments.resize(f_.segments.size());
    for (size_t i = 0; i < f_.segments.size(); ++i) segment(i);
    checkOutputs();
    if (!errors_.empty()) {
      std::string msg;
      for (const std::string &e : errors_) msg += (msg.empty() ? "" : "\n") + e;
      return Error{HJ_ERR_INVALID_ARGUMENT, msg};
    }
    schedule();
    return std::move(a_);
  }

 private:
  void error(const std::string &path, const std::string &msg) {
    errors_.push_back((f_.file.empty() ? "" : f_.file + ": ") + path + ": " + msg);
  }

  // A name for the lowered program that no other value has.
  std::string unique(const std::string &want) {
    std::string n = want;
    for (int k = 1; !used_.insert(n).second; ++k) n = want + "_" + std::to_string(k);
    return n;
  }

  void checkInputs() {
    uint32_t tensors = 0;
    for (size_t i = 0; i < f_.inputs.size(); ++i) {
      const FusionInput &in = f_.inputs[i];
      std::string path = idx("inputs", i);
      if (!isIdentifier(in.name)) error(path + ".name", "'" + in.name + "' is not a valid name (letters, digits, '_')");
      if (a_.tensors.count(in.name) || a_.scalars.count(in.name)) error(path + ".name", "input '" + in.name + "' is defined twice");
      used_.insert(in.name);
      if (in.isTensor) {
        if (in.dims.size() > kMaxRank) error(path + ".dims", "rank " + std::to_string(in.dims.size()) + "; the limit is 8");
        for (size_t d = 0; d < in.dims.size(); ++d)
          if (in.dims[d] < 0 && in.dims[d] != kDynamic) error(path + idx(".dims", d), "a dim is '?' or >= 0");
        TensorInfo t;
        t.name = in.name;
        t.kind = TensorKind::Input;
        t.dtype = in.dtype;
        t.rank = static_cast<uint32_t>(in.dims.size());
        t.inputIndex = tensors++;
        a_.tensors.emplace(in.name, t);
      } else {
        if (!isScalarType(in.dtype))
          error(path + ".dtype", std::string(dtypeName(in.dtype)) + " is not a scalar type (i64, i32, f32, f64, bool)");
        a_.scalars.emplace(in.name, static_cast<uint32_t>(a_.scalarTypes.size()));
        a_.scalarTypes.push_back(in.dtype);
      }
    }
  }

  void checkKernels() {
    std::set<std::string> seen;
    for (size_t i = 0; i < f_.kernels.size(); ++i) {
      const Kernel &k = f_.kernels[i];
      std::string path = idx("kernels", i);
      if (!isIdentifier(k.name)) error(path + ".name", "'" + k.name + "' is not a valid name (letters, digits, '_')");
      if (!seen.insert(k.name).second) error(path + ".name", "kernel '" + k.name + "' is declared twice");
      if (k.cuda && !k.entry) error(path, "'cuda' needs 'entry' (the extern \"C\" function to launch)");
      if (k.image && !k.entry) error(path, "'image' needs 'entry' (the kernel in the image to launch)");
      if (k.entry && !k.cuda && !k.image) error(path, "'entry' needs 'cuda' (the CUDA source file) or 'image' (a compiled image)");
      if (k.cuda && k.image) error(path, "give 'cuda' or 'image', not both: a kernel has one CUDA implementation");
      if (k.image && k.nvrtcOptions) error(path, "'nvrtc_options' apply to a CUDA source; an image is compiled already");
      if (!k.cuda && !k.image && !k.host) error(path, "no implementation: give 'host' and/or 'cuda' or 'image' with 'entry'");
      for (size_t p = 0; p < k.params.size(); ++p)
        if (!k.params[p].isTensor() && !isScalarType(k.params[p].dtype))
          error(path + idx(".params", p), toString(k.params[p]) + " is not a parameter type");
    }
  }

  // A tensor of segment `seg` by name: a summary entry, or a global tensor.
  // `visible` limits which local names count (those defined so far).
  struct Found {
    bool ok = false;
    DType dtype = DType::f32;
    uint32_t rank = 0;
  };

  // A segment that is a matmul: its inputs A, B (and the bias), one output
  // C, nothing of a kernel's.
  void matmulSegment(size_t i, const Segment &s, SegmentPlan &sp, const std::string &path,
                     const std::set<std::string> &visible) {
    const MatmulSpec &m = *s.matmul;
    sp.matmul = true;
    if (s.kernel) error(path + ".kernel", "a segment is a kernel or a matmul, not both");
    if (!s.summary.empty() || !s.scalars.empty() || !s.scratch.empty() || !sp.intermediates.empty())
      error(path, "a matmul segment takes no summary, scalars or scratch (its workspace is matmul.workspace_bytes)");
    size_t want = m.bias ? 3 : 2;
    if (s.inputs.size() != want) {
      error(path + ".inputs", "a matmul takes " + std::string(m.bias ? "A, B and the bias" : "A and B") + ": " +
                                  std::to_string(want) + " inputs, not " + std::to_string(s.inputs.size()));
      return;
    }
    if (s.outputs.size() != 1 || sp.allocs.size() != 1) {
      error(path + ".outputs", "a matmul writes one output, a buffer of its own (not an alias)");
      return;
    }
    Found a = findTensor(i, s.inputs[0], visible), b = findTensor(i, s.inputs[1], visible);
    const TensorInfo &c = a_.tensors.at(s.outputs[0].name);
    if (!a.ok || !b.ok) return;  // an unknown input, already reported
    auto ranked = [&](const Found &t, const std::string &what, uint32_t lo, uint32_t hi) {
      if (t.rank < lo || t.rank > hi)
        error(path, "matmul's " + what + " has rank " + std::to_string(t.rank) + "; it must be " + std::to_string(lo) +
                        (lo == hi ? "" : " or " + std::to_string(hi)));
    };
    ranked(a, "A ('" + s.inputs[0] + "')", 2, 3);
    ranked(b, "B ('" + s.inputs[1] + "')", 2, 3);
    ranked({true, c.dtype, c.rank}, "output ('" + s.outputs[0].name + "')", 2, 3);
    if (c.rank == 2 && (a.rank == 3 || b.rank == 3))
      error(path, "matmul's output has rank 2 while A or B has a batch dim");
    if (a.dtype != DType::f32 && a.dtype != DType::f16 && a.dtype != DType::bf16)
      error(path, "matmul's A ('" + s.inputs[0] + "') is " + dtypeName(a.dtype) + "; a matmul takes f32, f16 or bf16");
    else if (b.dtype != a.dtype)
      error(path, "matmul's B ('" + s.inputs[1] + "') is " + dtypeName(b.dtype) + "; it must be A's dtype, " +
                      dtypeName(a.dtype));
    else if (c.dtype != DType::f32 && c.dtype != a.dtype)
      error(path, "matmul's output is " + std::string(dtypeName(c.dtype)) + "; with " + dtypeName(a.dtype) +
                      " inputs it must be f32 or " + dtypeName(a.dtype));
    if (m.bias) {
      Found bias = findTensor(i, s.inputs[2], visible);
      if (bias.ok && (bias.rank != 1 || bias.dtype != c.dtype))
        error(path, "matmul's bias ('" + s.inputs[2] + "') must be a rank-1 tensor of the output's dtype, " +
                        dtypeName(c.dtype));
    }
    if (!std::isfinite(m.alpha)) error(path + ".matmul.alpha", "must be finite");
    sizeExpr(i, m.workspaceBytes, path + ".matmul.workspace_bytes", visible, 0, "a workspace size", INT64_MAX);
  }
  Found findTensor(size_t seg, const std::string &name, const std::set<std::string> &visible) const {
    Found r;
    if (!visible.count(name)) return r;
    const Segment &s = f_.segments[seg];
    for (const TensorSpec &e : s.summary)
      if (e.name == name) return {true, e.dtype, static_cast<uint32_t>(e.extents.size())};
    for (const TensorSpec &o : s.outputs)
      if (o.name == name) return {true, o.dtype, static_cast<uint32_t>(o.extents.size())};
    if (auto it = a_.tensors.find(name); it != a_.tensors.end()) return {true, it->second.dtype, it->second.rank};
    return r;
  }

  // Types an expression; nullopt after reporting at `path`.
  std::optional<ExprType> type(size_t seg, const SizeExpr &e, const std::string &path, const std::set<std::string> &visible) {
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

  // Extents, strides and launch dims: i64 expressions (or integer literals);
  // one that is constant must lie in [min, max] (what the runtime accepts).
  // Returns its value when it is constant.
  std::optional<int64_t> sizeExpr(size_t seg, const SizeExpr &e, const std::string &path,
                                  const std::set<std::string> &visible, int64_t min, const char *what,
                                  int64_t max = INT64_MAX) {
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

  void shape(size_t seg, const TensorSpec &t, const std::string &path, const std::set<std::string> &visible) {
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
    // All constant: the size is known now, and must fit.
    uint64_t bytes = 0;
    if (t.aliasOf.empty() && rankOk && stridesOk && sizes.size() == t.extents.size() &&
        strides.size() == t.strides.size() && !bufferBytes(sizes, strides, dtypeBytes(t.dtype), &bytes))
      error(path + ".extents", "the buffer holds more than 2^62 bytes of " + std::string(dtypeName(t.dtype)) +
                                   ": its size overflows");
  }

  void segment(size_t i) {
    const Segment &s = f_.segments[i];
    SegmentPlan &sp = a_.segments[i];
    std::string path = idx("segments", i);
    if (!s.name.empty() && !isIdentifier(s.name)) error(path + ".name", "'" + s.name + "' is not a valid name");
    std::set<std::string> visible;
    bool inputsKnown = true;  // else the kernel's parameters are not compared: that error would follow from this one
    for (size_t k = 0; k < s.inputs.size(); ++k) {
      const std::string &in = s.inputs[k];
      auto it = a_.tensors.find(in);
      if (it == a_.tensors.end()) {
        inputsKnown = false;
        error(path + idx(".inputs", k), a_.scalars.count(in) ? "'" + in + "' is a scalar input; segments take tensors "
                                                                   "(scalars reach kernels through 'scalars')"
                                                             : "unknown tensor '" + in + "' (not a fusion input nor "
                                                                   "an output of an earlier segment)");
        continue;
      }
      visible.insert(in);
      sp.tensorArgs.push_back(in);
    }
    for (const TensorSpec &e : s.summary) allNames_.insert(e.name);
    // Outputs.
    for (size_t k = 0; k < s.outputs.size(); ++k) {
      const TensorSpec &o = s.outputs[k];
      std::string op = path + idx(".outputs", k);
      if (!isIdentifier(o.name)) error(op + ".name", "'" + o.name + "' is not a valid name (letters, digits, '_')");
      shape(i, o, op, visible);
      if (o.zeroInit || o.resetsToZero)
        error(op, "flags belong to the kernel summary: add an entry named '" + o.name + "' with zero_init there");
      sp.tensorArgs.push_back(o.name);
      visible.insert(o.name);
      auto prev = a_.tensors.find(o.name);
      if (prev != a_.tensors.end()) {
        const TensorInfo &p = prev->second;
        if (p.kind == TensorKind::Buffer && p.segment >= 0 && p.segment < static_cast<int>(i) && o.aliasOf.empty() &&
            std::count(f_.outputs.begin(), f_.outputs.end(), o.name)) {
          if (p.dtype != o.dtype || p.rank != o.extents.size())
            error(op, "fusion output '" + o.name + "' was allocated by segment " + std::to_string(p.segment) +
                          " with another dtype or rank");
          continue;  // written again: the buffer of the earlier segment
        }
        error(op + ".name", "'" + o.name + "' is already defined" +
                                (p.segment >= 0 ? " (by segments[" + std::to_string(p.segment) + "])" : " (a fusion input)"));
        continue;
      }
      used_.insert(o.name);
      TensorInfo t;
      t.name = o.name;
      t.dtype = o.dtype;
      t.rank = static_cast<uint32_t>(o.extents.size());
      t.segment = static_cast<int>(i);
      t.spec = &o;
      t.fusionOutput = std::count(f_.outputs.begin(), f_.outputs.end(), o.name) > 0;
      if (!o.aliasOf.empty()) {
        t.kind = TensorKind::View;
        t.base = o.aliasOf;
        auto b = a_.tensors.find(o.aliasOf);
        if (std::find(s.inputs.begin(), s.inputs.end(), o.aliasOf) == s.inputs.end() || b == a_.tensors.end()) {
          error(op + ".alias_of", "'" + o.aliasOf + "' is not an input of this segment (an output aliases one of its inputs)");
        } else {
          t.root = b->second.kind == TensorKind::View ? b->second.root : b->second.name;
          if (b->second.dtype != o.dtype)
            error(op + ".dtype", "a view has the dtype of the tensor it views (" + std::string(dtypeName(b->second.dtype)) +
                                     "), got " + dtypeName(o.dtype));
        }
        sp.views.push_back(o.name);
      } else {
        t.kind = TensorKind::Buffer;
        t.root = o.name;
        if (t.fusionOutput) t.flags |= HJ_ALLOC_OUTPUT;
        sp.allocs.push_back(o.name);
      }
      a_.tensors.emplace(o.name, t);
    }
    // The kernel summary.
    std::set<std::string> entryNames;
    for (size_t k = 0; k < s.summary.size(); ++k) {
      const TensorSpec &e = s.summary[k];
      std::string ep = path + idx(".summary", k);
      if (!isIdentifier(e.name)) error(ep + ".name", "'" + e.name + "' is not a valid name (letters, digits, '_')");
      if (!entryNames.insert(e.name).second) error(ep + ".name", "'" + e.name + "' is listed twice in this summary");
      if (e.resetsToZero && !e.zeroInit)
        error(ep, "resets_to_zero without zero_init: memory the kernel resets must start zeroed");
      bool isOutput = std::any_of(s.outputs.begin(), s.outputs.end(), [&](const TensorSpec &o) { return o.name == e.name; });
      if (isOutput) {
        TensorInfo &t = a_.tensors.at(e.name);
        if (!e.aliasOf.empty()) error(ep + ".alias_of", "an entry for output '" + e.name + "' cannot be an alias");
        if (t.dtype != e.dtype || t.rank != e.extents.size())
          error(ep, "the entry for output '" + e.name + "' has another dtype or rank than the output");
        else if (t.spec)
          for (size_t d = 0; d < e.extents.size(); ++d)
            if (e.extents[d].valid() && t.spec->extents[d].valid() && e.extents[d].str() != t.spec->extents[d].str())
              error(ep + idx(".extents", d), "'" + e.extents[d].str() + "' differs from the output's extent '" +
                                                  t.spec->extents[d].str() + "'");
        if (t.kind != TensorKind::Buffer) error(ep, "output '" + e.name + "' is a view: it has no memory to flag");
        if (t.fusionOutput && e.resetsToZero)
          error(ep, "fusion output '" + e.name + "' cannot be resets_to_zero: it holds results, which no kernel resets");
        t.flags |= (e.zeroInit ? uint32_t{HJ_ALLOC_ZERO_INIT} : 0u) | (e.resetsToZero ? uint32_t{HJ_ALLOC_RESETS_TO_ZERO} : 0u);
        continue;
      }
      if (a_.tensors.count(e.name) && std::find(s.inputs.begin(), s.inputs.end(), e.name) != s.inputs.end()) {
        error(ep + ".name", "'" + e.name + "' is an input of this segment; a summary entry names a buffer of its own");
        continue;
      }
      shape(i, e, ep, visible);
      if (!e.aliasOf.empty()) {
        if (!visible.count(e.aliasOf)) error(ep + ".alias_of", "unknown tensor '" + e.aliasOf + "' in this segment");
        visible.insert(e.name);
        continue;
      }
      Intermediate m;
      m.entry = k;
      m.irName = unique(e.name);
      m.flags = (e.zeroInit ? uint32_t{HJ_ALLOC_ZERO_INIT} : 0u) | (e.resetsToZero ? uint32_t{HJ_ALLOC_RESETS_TO_ZERO} : 0u);
      sp.local[e.name] = m.irName;
      sp.intermediates.push_back(m);
      visible.insert(e.name);
    }
    for (const Intermediate &m : sp.intermediates) sp.tensorArgs.push_back(m.irName);
    for (size_t k = 0; k < s.scratch.size(); ++k) {
      const TensorSpec &e = s.scratch[k];
      std::string ep = path + idx(".scratch", k);
      if (!isIdentifier(e.name)) error(ep + ".name", "'" + e.name + "' is not a valid name (letters, digits, '_')");
      if (visible.count(e.name)) error(ep + ".name", "'" + e.name + "' is already a tensor of this segment");
      if (e.resetsToZero && !e.zeroInit)
        error(ep, "resets_to_zero without zero_init: memory the kernel resets must start zeroed");
      shape(i, e, ep, visible);
      Intermediate m;
      m.entry = k;
      m.irName = unique(e.name);
      m.flags = (e.zeroInit ? uint32_t{HJ_ALLOC_ZERO_INIT} : 0u) | (e.resetsToZero ? uint32_t{HJ_ALLOC_RESETS_TO_ZERO} : 0u);
      sp.scratch.push_back(m);
    }
    if (s.matmul) {
      matmulSegment(i, s, sp, path, visible);
      return;
    }
    // The launch.
    if (!s.kernel) {
      if (!sp.allocs.empty() || !sp.intermediates.empty() || !s.scalars.empty() || !s.scratch.empty())
        error(path + ".kernel", "missing: only a segment whose outputs are all aliases launches nothing");
      return;
    }
    for (size_t k = 0; k < 3; ++k)
      sizeExpr(i, s.grid[k], path + idx(".launch.grid", k), visible, 1, "a grid dim", HJ_MAX_GRID_DIM);
    int64_t threads = 1;
    bool known = true;
    for (size_t k = 0; k < 3; ++k) {
      auto c = sizeExpr(i, s.block[k], path + idx(".launch.block", k), visible, 1, "a block dim", HJ_MAX_BLOCK_THREADS);
      known = known && c;
      if (c) threads *= *c;
    }
    if (known && threads > HJ_MAX_BLOCK_THREADS)
      error(path + ".launch.block", "the block has " + std::to_string(threads) + " threads; a block has at most " +
                                        std::to_string(HJ_MAX_BLOCK_THREADS));
    sizeExpr(i, s.smem, path + ".launch.smem", visible, 0, "smem", HJ_MAX_SMEM_BYTES);
    auto kit = std::find_if(f_.kernels.begin(), f_.kernels.end(), [&](const Kernel &k) { return k.name == *s.kernel; });
    if (kit == f_.kernels.end()) {
      error(path + ".kernel", "unknown kernel '" + *s.kernel + "'");
      return;
    }
    sp.kernel = static_cast<int>(kit - f_.kernels.begin());
    if (!inputsKnown) return;
    const Kernel &kd = *kit;
    size_t nt = sp.tensorArgs.size(), given = nt + s.scalars.size() + s.scratch.size();
    if (given != kd.params.size()) {
      error(path, "kernel '" + kd.name + "' declares " + std::to_string(kd.params.size()) + " parameters; the segment passes " +
                      std::to_string(given) + " (" + std::to_string(s.inputs.size()) + " inputs, " +
                      std::to_string(s.outputs.size()) + " outputs, " + std::to_string(sp.intermediates.size()) +
                      " intermediates, " + std::to_string(s.scalars.size()) + " scalars" +
                      (s.scratch.empty() ? "" : ", " + std::to_string(s.scratch.size()) + " scratch") + ", in that order)");
      return;
    }
    for (size_t k = 0; k < s.scratch.size(); ++k) {
      size_t p = nt + s.scalars.size() + k;
      const ParamType &pt = kd.params[p];
      const TensorSpec &e = s.scratch[k];
      std::string what = "parameter " + std::to_string(p) + " of kernel '" + kd.name + "' (" + toString(pt) + ")";
      if (!pt.isTensor()) error(path + idx(".scratch", k), what + " is a scalar, but scratch '" + e.name + "' is passed there");
      else if (pt.dtype != e.dtype) error(path + idx(".scratch", k), what + " gets scratch '" + e.name + "' of dtype " + dtypeName(e.dtype));
      else if (pt.isStruct && pt.rank != e.extents.size())
        error(path + idx(".scratch", k), what + " gets scratch '" + e.name + "' of rank " + std::to_string(e.extents.size()));
    }
    for (size_t p = 0; p < nt; ++p) {
      const ParamType &pt = kd.params[p];
      const std::string &arg = sp.tensorArgs[p];
      Found t;
      for (const Intermediate &m : sp.intermediates)  // intermediates are passed under their irName
        if (m.irName == arg) t = {true, s.summary[m.entry].dtype, static_cast<uint32_t>(s.summary[m.entry].extents.size())};
      if (!t.ok) t = findTensor(i, arg, visible);
      std::string what = "parameter " + std::to_string(p) + " of kernel '" + kd.name + "' (" + toString(pt) + ")";
      if (!pt.isTensor()) error(path, what + " is a scalar, but the segment passes tensor '" + arg + "' there");
      else if (t.dtype != pt.dtype)
        error(path, what + " gets '" + arg + "' of dtype " + dtypeName(t.dtype));
      else if (pt.isStruct && pt.rank != t.rank)
        error(path, what + " gets '" + arg + "' of rank " + std::to_string(t.rank));
    }
    for (size_t k = 0; k < s.scalars.size(); ++k) {
      const ParamType &pt = kd.params[nt + k];
      std::string sp2 = path + idx(".scalars", k);
      auto t = type(i, s.scalars[k], sp2, visible);
      if (!t) continue;
      if (pt.isTensor()) {
        error(sp2, "kernel '" + kd.name + "' takes a tensor (" + toString(pt) + ") at parameter " + std::to_string(nt + k));
        continue;
      }
      bool ok = t->isLiteral ? !isFloat(t->dtype) || isFloat(pt.dtype) : t->dtype == pt.dtype;
      if (ok && t->isLiteral && !isFloat(t->dtype))
        if (auto c = foldLiterals(s.scalars[k]); c && c->kind == Operand::Kind::Int) {
          bool fits = (pt.dtype != DType::i32 || (c->i >= INT32_MIN && c->i <= INT32_MAX)) &&
                      (pt.dtype != DType::Bool || c->i == 0 || c->i == 1);
          if (!fits) {
            error(sp2, "kernel '" + kd.name + "' parameter " + std::to_string(nt + k) + " is " + dtypeName(pt.dtype) + "; " +
                           std::to_string(c->i) + " does not fit it");
            continue;
          }
        }
      if (!ok)
        error(sp2, "kernel '" + kd.name + "' parameter " + std::to_string(nt + k) + " is " + dtypeName(pt.dtype) + "; '" +
                       s.scalars[k].str() + "' is " + (t->isLiteral ? (isFloat(t->dtype) ? "a float literal" : "an integer literal")
                                                                    : dtypeName(t->dtype)));
    }
  }

  void checkOutputs() {
    if (f_.outputs.empty()) error("outputs", "a fusion returns at least one tensor");
    std::set<std::string> seen;
    for (size_t i = 0; i < f_.outputs.size(); ++i) {
      const std::string &o = f_.outputs[i];
      std::string path = idx("outputs", i);
      if (!seen.insert(o).second) error(path, "'" + o + "' is returned twice");
      auto it = a_.tensors.find(o);
      if (it == a_.tensors.end()) error(path, "unknown tensor '" + o + "' (fusion outputs are segment outputs)");
      else if (it->second.kind == TensorKind::Input) error(path, "'" + o + "' is a fusion input; outputs are segment outputs");
      else if (it->second.kind == TensorKind::View)
        error(path, "'" + o + "' is a view of '" + it->second.base + "'; a fusion returns buffers its segments allocate");
    }
  }

  // Last uses, then each buffer's free after the segment of its last use.
  void schedule() {
    std::vector<std::string> order;  // buffers in allocation order
    for (size_t i = 0; i < f_.segments.size(); ++i) {
      const SegmentPlan &sp = a_.segments[i];
      for (const std::string &n : sp.allocs) {
        order.push_back(n);
        TensorInfo &t = a_.tensors.at(n);
        t.lastUse = std::max(t.lastUse, static_cast<int>(i));
      }
      auto touch = [&](const std::string &n) {
        auto it = a_.tensors.find(n);
        if (it == a_.tensors.end()) return;  // an intermediate
        auto r = a_.tensors.find(it->second.kind == TensorKind::View ? it->second.root : n);
        if (r != a_.tensors.end() && r->second.kind == TensorKind::Buffer)
          r->second.lastUse = std::max(r->second.lastUse, static_cast<int>(i));
      };
      if (sp.kernel >= 0 || sp.matmul)
        for (const std::string &n : sp.tensorArgs) touch(n);
      for (const std::string &n : sp.views) touch(a_.tensors.at(n).base);  // making a view uses its base
    }
    for (const std::string &n : order) {
      const TensorInfo &t = a_.tensors.at(n);
      if (!t.fusionOutput) a_.segments[t.lastUse].frees.push_back(n);
    }
  }

  const Fusion &f_;
  FusionAnalysis a_;
  std::vector<std::string> errors_;
  std::set<std::string> used_, allNames_;
};

}  // namespace

Expected<FusionAnalysis> analyzeFusion(const Fusion &f) { return Analyzer(f).run(); }

std::optional<Operand> foldLiterals(const SizeExpr &e, std::string *error) {
  switch (e.kind()) {
    case SizeExpr::Kind::Int: return Operand::integer(e.intValue());
    case SizeExpr::Kind::Float: return Operand::floating(e.floatValue());
    case SizeExpr::Kind::Op: {
      // Arithmetic only: other operations are typed values of the program.
      if (opClass(e.op()) != OpClass::Arith && opClass(e.op()) != OpClass::IntArith) return std::nullopt;
      auto a = foldLiterals(e.operands()[0], error), b = foldLiterals(e.operands()[1], error);
      if (!a || !b) return std::nullopt;
      if (a->kind == Operand::Kind::Int && b->kind == Operand::Kind::Int) {
        int64_t r = 0;
        if (ScalarError err = evalIntOp(e.op(), DType::i64, a->i, b->i, &r); err != ScalarError::None) {
          if (error) *error = scalarErrorText(err);
          return std::nullopt;
        }
        return Operand::integer(r);
      }
      double x = a->kind == Operand::Kind::Int ? static_cast<double>(a->i) : a->f;
      double y = b->kind == Operand::Kind::Int ? static_cast<double>(b->i) : b->f;
      double r = 0;
      int64_t unused = 0;
      evalFloatOp(e.op(), DType::f64, x, y, &r, &unused);
      return Operand::floating(r);
    }
    default: return std::nullopt;
  }
}

}  // namespace hostjit::fusion

namespace hostjit {

Expected<void> checkFusion(const Fusion &f) {
  auto a = fusion::analyzeFusion(f);
  if (!a) return a.error();
  return {};
}

}  // namespace hostjit
