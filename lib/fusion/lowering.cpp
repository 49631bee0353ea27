// lowering.cpp - builds the Host IR program of a segmented fusion, or of one
// of its segments, from its analysis.
#include "hostjit/fusion/lowering.h"

#include <map>
#include <set>

#include "hostjit/fusion/analysis.h"
#include "hostjit/text/text.h"
#include "hostjit/verify/verifier.h"
#include "size_expr_ops.h"

namespace hostjit {

namespace {

using fusion::FusionAnalysis;
using fusion::TensorKind;

std::string at(const std::string &field, size_t i) { return field + "[" + std::to_string(i) + "]"; }

class Lowerer {
 public:
  Lowerer(const Fusion &f, const FusionAnalysis &a, ProgramComments *comments = nullptr)
      : f_(f), a_(a), b_(f.name), comments_(comments) {}

  // The whole fusion: one function taking its inputs, returning its outputs.
  Program run() {
    begin();
    for (const FusionInput &in : f_.inputs)
      values_[in.name] = in.isTensor ? b_.tensorInput(in.name, in.dtype, in.dims) : b_.scalarInput(in.name, in.dtype);
    for (size_t i = 0; i < f_.segments.size(); ++i) segment(i);
    std::vector<Operand> rets;
    for (const std::string &o : f_.outputs) {
      ValueId v = values_.at(o);
      rets.push_back(Operand::of(v));
      TensorType tt{b_.program().value(v).dtype, {}};
      const auto &al = std::get<Alloc>(b_.program().body[b_.program().value(v).defIndex].node);
      for (const Operand &x : al.extents) tt.dims.push_back(constant(x).value_or(kDynamic));
      b_.result(tt);
    }
    b_.ret(rets);
    return finish();
  }

  // Segment i alone (lowering.h, lowerSegment).
  SegmentProgram segmentOnly(size_t i, bool supplied) {
    const Segment &s = f_.segments[i];
    const fusion::SegmentPlan &sp = a_.segments[i];
    begin();
    // Tensors the caller gives: the segment's inputs, outputs and (supplied)
    // intermediates, with dynamic dims (their shapes are checked against
    // the specs, and expressions of an input read the tensor given).
    auto given = [&](const std::string &name, DType dtype, size_t rank) {
      return b_.tensorInput(fresh(name + "_given"), dtype, std::vector<int64_t>(rank, kDynamic), {}, /*written=*/true);
    };
    for (const std::string &n : s.inputs) {
      const fusion::TensorInfo &t = a_.tensors.at(n);
      values_[n] = b_.tensorInput(n, t.dtype, std::vector<int64_t>(t.rank, kDynamic));
    }
    std::vector<ValueId> outs, mids;
    for (const TensorSpec &o : s.outputs) outs.push_back(given(o.name, o.dtype, o.extents.size()));
    if (supplied)
      for (const fusion::Intermediate &m : sp.intermediates) {
        const TensorSpec &e = s.summary[m.entry];
        mids.push_back(given(m.irName, e.dtype, e.extents.size()));
      }
    for (const FusionInput &in : f_.inputs)
      if (!in.isTensor) values_[in.name] = b_.scalarInput(in.name, in.dtype);
    SegmentProgram out;
    // Each given tensor is seen through a view of its spec, so expressions
    // of it (and tensor-struct arguments) use the spec, as in the lowered
    // fusion, where the same tensors are allocations.
    std::string path = at("segments", i);
    for (size_t k = 0; k < s.outputs.size(); ++k) {
      const TensorSpec &o = s.outputs[k];
      SegmentProgram::Shape shape = this->shape(i, o, path + at(".outputs", k), o.name);
      values_[o.name] = b_.view(o.name, Operand::of(outs[k]), shape.extents, shape.strides);
      out.outputs.push_back(exprsOf(shape));
    }
    std::vector<ValueId> allocated;
    for (size_t k = 0; k < sp.intermediates.size(); ++k) {
      const fusion::Intermediate &m = sp.intermediates[k];
      const TensorSpec &e = s.summary[m.entry];
      SegmentProgram::Shape shape = this->shape(i, e, path + at(".summary", m.entry), m.irName);
      if (supplied) {
        values_[m.irName] = b_.view(m.irName, Operand::of(mids[k]), shape.extents, shape.strides);
      } else {
        values_[m.irName] = b_.alloc(m.irName, e.dtype, shape.extents, shape.strides, (m.flags & HJ_ALLOC_ZERO_INIT) != 0,
                                     (m.flags & HJ_ALLOC_RESETS_TO_ZERO) != 0);
        allocated.push_back(values_[m.irName]);
      }
      out.intermediates.push_back(exprsOf(shape));
    }
    allocScratch(i, s, sp);
    if (sp.kernel >= 0) {
      Launch l = launch(i, s, sp, origin(i, s));
      for (int d = 0; d < 3; ++d) out.dims[d] = exprOf(l.grid[d]), out.dims[3 + d] = exprOf(l.block[d]);
      out.dims[6] = exprOf(l.smem);
      for (size_t k = sp.tensorArgs.size(); k < sp.tensorArgs.size() + s.scalars.size(); ++k) {
        const Operand &o = l.args[k];
        DType want = f_.kernels[sp.kernel].params[k].dtype;
        out.scalars.push_back(o.isValue() ? b_.program().value(o.value).expr
                              : o.kind == Operand::Kind::Float || isFloat(want)
                                  ? b_.program().exprs.constFloat(o.kind == Operand::Kind::Float ? o.f : static_cast<double>(o.i), want)
                                  : b_.program().exprs.constInt(o.i, want));
      }
    }
    if (sp.matmul) matmul(i, s, sp, origin(i, s));
    for (const fusion::Intermediate &m : sp.scratch) b_.free(Operand::of(values_.at(m.irName)));
    for (ValueId v : allocated) b_.free(Operand::of(v));
    b_.ret({});
    out.program = finish();
    return out;
  }

 private:
  void begin() {
    for (const Kernel &k : f_.kernels) b_.kernel(k);
    for (const FusionInput &in : f_.inputs) ops_.reserve(in.name);
    for (const auto &[name, t] : a_.tensors) ops_.reserve(name);
    for (const auto &sp : a_.segments) {
      for (const auto &m : sp.intermediates) ops_.reserve(m.irName);
      for (const auto &m : sp.scratch) ops_.reserve(m.irName);
    }
  }

  Program finish() {
    Program p = b_.finish();
    p.filename = f_.file;
    return p;
  }

  // "f.json: segments[1] (reduce)": where a segment's launch comes from.
  std::string origin(size_t i, const Segment &s) const {
    return (f_.file.empty() ? std::string() : f_.file + ": ") + at("segments", i) + (s.name.empty() ? "" : " (" + s.name + ")");
  }

  std::optional<int64_t> constant(const Operand &o) {
    if (o.kind == Operand::Kind::Int) return o.i;
    if (!o.isValue()) return std::nullopt;
    ExprId e = b_.program().value(o.value).expr;
    if (e.valid() && b_.program().exprs[e].kind == Expr::Kind::Const) return b_.program().exprs[e].i;
    return std::nullopt;
  }

  ExprId exprOf(const Operand &o) {
    if (o.isValue()) return b_.program().value(o.value).expr;
    return b_.program().exprs.constInt(o.i);
  }

  SegmentProgram::Shape exprsOf(const SegmentProgram::Shape &s) {
    SegmentProgram::Shape out;
    for (const Operand &o : s.extents) out.extentExprs.push_back(exprOf(o));
    for (const Operand &o : s.strides) out.strideExprs.push_back(exprOf(o));
    for (const Operand &o : s.offset) out.offsetExprs.push_back(exprOf(o));
    return out;
  }

  std::string fresh(const std::string &want) { return ops_.fresh(want); }


  // The value of a tensor name in segment `seg` (its summary entries first).
  ValueId tensor(size_t seg, const std::string &name) const {
    const auto &local = a_.segments[seg].local;
    if (auto it = local.find(name); it != local.end()) return values_.at(it->second);
    return values_.at(name);
  }

  // The operand computing e in segment `seg`; `name` names its value and
  // `path` is the field it comes from (the statement's origin, which
  // messages about it name). The same computation on the same values is
  // made once for the whole program.
  Operand expr(size_t seg, const SizeExpr &e, const std::string &name, const std::string &path) {
    SizeExprOps::Names names{[&](const std::string &t) { return tensor(seg, t); },
                             [&](const std::string &n) { return Operand::of(values_.at(n)); }};
    return ops_.build(e, name, (f_.file.empty() ? std::string() : f_.file + ": ") + path, names);
  }

  std::vector<Operand> exprs(size_t seg, const std::vector<SizeExpr> &es, const std::string &name, const char *what,
                             const std::string &path, const char *field) {
    std::vector<Operand> out;
    for (size_t d = 0; d < es.size(); ++d)
      out.push_back(expr(seg, es[d], name + "_" + what + std::to_string(d), path + "." + field + "[" + std::to_string(d) + "]"));
    return out;
  }

  // A tensor spec's extents and strides in segment `seg`; `path` is its field.
  SegmentProgram::Shape shape(size_t seg, const TensorSpec &t, const std::string &path, const std::string &name) {
    SegmentProgram::Shape s;
    s.extents = exprs(seg, t.extents, name, "d", path, "extents");
    s.strides = exprs(seg, t.strides, name, "s", path, "strides");
    if (auto c = fusion::foldLiterals(t.offset); !c || c->kind != Operand::Kind::Int || c->i != 0)
      s.offset.push_back(expr(seg, t.offset, name + "_offset", path + ".offset"));
    return s;
  }

  void segment(size_t i) {
    const Segment &s = f_.segments[i];
    const fusion::SegmentPlan &sp = a_.segments[i];
    size_t first = b_.program().body.size();
    body(i, s, sp);
    if (comments_ && first < b_.program().body.size())
      comments_->stmt(first).leading.push_back(" segments[" + std::to_string(i) + "]" +
                                               (s.name.empty() ? "" : " (" + s.name + ")") +
                                               (s.kernel   ? ": kernel @" + *s.kernel
                                                : s.matmul ? std::string(": matmul")
                                                           : ": views only"));
  }

  // The launch of segment i, built; its statement's origin is `from`.
  Launch launch(size_t i, const Segment &s, const fusion::SegmentPlan &sp, const std::string &from) {
    const Kernel &k = f_.kernels[sp.kernel];
    std::string sname = s.name.empty() ? "seg" + std::to_string(i) : s.name;
    std::string path = at("segments", i);
    std::array<Operand, 3> grid, block;
    static const char *axes[] = {"x", "y", "z"};
    for (int d = 0; d < 3; ++d) grid[d] = expr(i, s.grid[d], sname + "_grid_" + axes[d], path + at(".launch.grid", d));
    for (int d = 0; d < 3; ++d) block[d] = expr(i, s.block[d], sname + "_block_" + axes[d], path + at(".launch.block", d));
    Operand smem = expr(i, s.smem, sname + "_smem", path + ".launch.smem");
    std::vector<Operand> args;
    for (const std::string &n : sp.tensorArgs)
      args.push_back(Operand::of(sp.local.count(n) ? values_.at(sp.local.at(n)) : values_.at(n)));
    for (size_t k2 = 0; k2 < s.scalars.size(); ++k2) {
      Operand o = expr(i, s.scalars[k2], sname + "_scalar" + std::to_string(k2), path + at(".scalars", k2));
      DType want = k.params[sp.tensorArgs.size() + k2].dtype;
      if (o.kind == Operand::Kind::Int && isFloat(want)) o = Operand::floating(static_cast<double>(o.i));
      args.push_back(o);
    }
    for (const fusion::Intermediate &m : sp.scratch) args.push_back(Operand::of(values_.at(m.irName)));
    b_.launch(KernelId{static_cast<uint32_t>(sp.kernel)}, grid, block, smem, args);
    b_.program().body.back().origin = from;
    return std::get<Launch>(b_.program().body.back().node);
  }

  // The matmul of segment i (a library call), with its workspace allocated
  // around it; the statement's origin is `from`.
  void matmul(size_t i, const Segment &s, const fusion::SegmentPlan &sp, const std::string &from) {
    const MatmulSpec &ms = *s.matmul;
    std::string sname = s.name.empty() ? "seg" + std::to_string(i) : s.name;
    auto tensor = [&](const std::string &n) { return Operand::of(values_.at(n)); };
    Matmul m;
    m.a = tensor(sp.tensorArgs[0]);
    m.b = tensor(sp.tensorArgs[1]);
    m.c = tensor(sp.tensorArgs.back());
    m.bias = ms.bias ? tensor(sp.tensorArgs[2]) : Operand::integer(0);
    m.workspace = Operand::integer(0);
    m.transposeA = ms.transposeA;
    m.transposeB = ms.transposeB;
    m.alpha = ms.alpha;
    std::optional<ValueId> ws;
    auto bytes = fusion::foldLiterals(ms.workspaceBytes);
    if (!bytes || bytes->kind != Operand::Kind::Int || bytes->i != 0) {
      Operand n = expr(i, ms.workspaceBytes, sname + "_workspace_bytes", at("segments", i) + ".matmul.workspace_bytes");
      ws = b_.alloc(sname + "_workspace", DType::u8, {n}, {}, false, false);
      m.workspace = Operand::of(*ws);
    }
    b_.matmul(m);
    b_.program().body.back().origin = from;
    if (ws) b_.free(Operand::of(*ws));
  }

  // The segment's scratch buffers, allocated just before its launch.
  void allocScratch(size_t i, const Segment &s, const fusion::SegmentPlan &sp) {
    std::string path = at("segments", i);
    for (const fusion::Intermediate &m : sp.scratch) {
      const TensorSpec &e = s.scratch[m.entry];
      SegmentProgram::Shape shape = this->shape(i, e, path + at(".scratch", m.entry), m.irName);
      values_[m.irName] = b_.alloc(m.irName, e.dtype, shape.extents, shape.strides, (m.flags & HJ_ALLOC_ZERO_INIT) != 0,
                                   (m.flags & HJ_ALLOC_RESETS_TO_ZERO) != 0);
    }
  }

  void body(size_t i, const Segment &s, const fusion::SegmentPlan &sp) {
    std::string path = at("segments", i);
    for (size_t k = 0; k < s.outputs.size(); ++k) {
      const TensorSpec &o = s.outputs[k];
      const fusion::TensorInfo &t = a_.tensors.at(o.name);
      if (t.segment != static_cast<int>(i)) continue;  // a fusion output allocated before
      SegmentProgram::Shape shape = this->shape(i, o, path + at(".outputs", k), o.name);
      if (t.kind == TensorKind::View) {
        values_[o.name] = b_.view(o.name, Operand::of(values_.at(t.base)), shape.extents, shape.strides, {},
                                  shape.offset.empty() ? Operand::integer(0) : shape.offset[0]);
      } else {
        values_[o.name] = b_.alloc(o.name, o.dtype, shape.extents, shape.strides, (t.flags & HJ_ALLOC_ZERO_INIT) != 0,
                                   (t.flags & HJ_ALLOC_RESETS_TO_ZERO) != 0);
      }
    }
    for (const fusion::Intermediate &m : sp.intermediates) {
      const TensorSpec &e = s.summary[m.entry];
      SegmentProgram::Shape shape = this->shape(i, e, path + at(".summary", m.entry), m.irName);
      values_[m.irName] = b_.alloc(m.irName, e.dtype, shape.extents, shape.strides, (m.flags & HJ_ALLOC_ZERO_INIT) != 0,
                                   (m.flags & HJ_ALLOC_RESETS_TO_ZERO) != 0);
    }
    allocScratch(i, s, sp);
    if (sp.kernel >= 0) launch(i, s, sp, origin(i, s));
    if (sp.matmul) matmul(i, s, sp, origin(i, s));
    // Scratch first, then the intermediates: the executor's segment program
    // frees its scratch before the intermediates, or before its caller
    // frees the intermediates it gave.
    for (const fusion::Intermediate &m : sp.scratch) b_.free(Operand::of(values_.at(m.irName)));
    for (const fusion::Intermediate &m : sp.intermediates) b_.free(Operand::of(values_.at(m.irName)));
    for (const std::string &n : sp.frees) b_.free(Operand::of(values_.at(n)));
  }

  const Fusion &f_;
  const FusionAnalysis &a_;
  ProgramBuilder b_;
  std::map<std::string, ValueId> values_;
  SizeExprOps ops_{b_};
  ProgramComments *comments_;
};

Error notVerified(const Fusion &f, const Program &p, const Diagnostics &d) {
  return Error{HJ_ERR_INTERNAL, "the lowered program of fusion '" + f.name + "' does not verify (a hostjit bug):\n" +
                                    d.format(p.filename, nullptr) + print(p)};
}

}  // namespace

Expected<Program> lowerFusion(const Fusion &f, ProgramComments *comments) {
  auto a = fusion::analyzeFusion(f);
  if (!a) return a.error();
  Program p = Lowerer(f, *a, comments).run();
  if (Diagnostics d = verify(p); !d.empty()) return notVerified(f, p, d);
  return p;
}

Expected<SegmentProgram> lowerSegment(const Fusion &f, const fusion::FusionAnalysis &a, size_t segment, bool supplied) {
  SegmentProgram s = Lowerer(f, a).segmentOnly(segment, supplied);
  if (Diagnostics d = verify(s.program); !d.empty()) return notVerified(f, s.program, d);
  return s;
}

}  // namespace hostjit
