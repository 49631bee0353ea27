// lowering.cpp - builds the Host IR program of a segmented fusion from its analysis.
#include "hostjit/fusion/lowering.h"

#include <map>
#include <set>

#include "hostjit/fusion/analysis.h"
#include "hostjit/text/text.h"
#include "hostjit/verify/verifier.h"

namespace hostjit {

namespace {

using fusion::FusionAnalysis;
using fusion::TensorKind;

class Lowerer {
 public:
  Lowerer(const Fusion &f, const FusionAnalysis &a) : f_(f), a_(a), b_(f.name) {}

  Program run() {
    for (const Kernel &k : f_.kernels) b_.kernel(k);
    for (const FusionInput &in : f_.inputs) {
      ValueId v = in.isTensor ? b_.tensorInput(in.name, in.dtype, in.dims) : b_.scalarInput(in.name, in.dtype);
      values_[in.name] = v;
      used_.insert(in.name);
    }
    for (const auto &[name, t] : a_.tensors) used_.insert(name);
    for (const auto &sp : a_.segments)
      for (const auto &m : sp.intermediates) used_.insert(m.irName);
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
    Program p = b_.finish();
    p.filename = f_.file;
    return p;
  }

 private:
  std::optional<int64_t> constant(const Operand &o) {
    if (o.kind == Operand::Kind::Int) return o.i;
    if (!o.isValue()) return std::nullopt;
    ExprId e = b_.program().value(o.value).expr;
    if (e.valid() && b_.program().exprs[e].kind == Expr::Kind::Const) return b_.program().exprs[e].i;
    return std::nullopt;
  }

  std::string fresh(const std::string &want) {
    std::string n = want;
    for (int k = 1; !used_.insert(n).second; ++k) n = want + "_" + std::to_string(k);
    return n;
  }

  // The value of a tensor name in segment `seg` (its summary entries first).
  ValueId tensor(size_t seg, const std::string &name) const {
    const auto &local = a_.segments[seg].local;
    if (auto it = local.find(name); it != local.end()) return values_.at(it->second);
    return values_.at(name);
  }

  // The operand computing e in segment `seg`; `name` names its value. The
  // same computation on the same values is made once for the whole program.
  Operand expr(size_t seg, const SizeExpr &e, const std::string &name) {
    if (auto c = fusion::foldLiterals(e)) return *c;
    switch (e.kind()) {
      case SizeExpr::Kind::Scalar: return Operand::of(values_.at(e.name()));
      case SizeExpr::Kind::Size:
      case SizeExpr::Kind::Stride: {
        ValueId t = tensor(seg, e.name());
        const std::string &tn = b_.program().value(t).name;
        bool size = e.kind() == SizeExpr::Kind::Size;
        return memoOp(std::string(size ? "_size" : "_stride") + std::to_string(e.dim()) + "%" + tn,
                      tn + (size ? "_size" : "_stride") + std::to_string(e.dim()), size ? OpCode::Size : OpCode::Stride,
                      Operand::of(t), Operand::integer(e.dim()));
      }
      case SizeExpr::Kind::Binary: {
        Operand a = expr(seg, e.lhs(), name + "_a"), b = expr(seg, e.rhs(), name + "_b");
        const Program &p = b_.program();
        return memoOp(std::string(opName(e.op())) + " " + printOperand(p, a) + ", " + printOperand(p, b), name, e.op(), a, b);
      }
      default: return Operand::integer(0);  // literals were folded
    }
  }

  Operand memoOp(const std::string &key, const std::string &name, OpCode op, Operand a, Operand b) {
    if (auto it = memo_.find(key); it != memo_.end()) return Operand::of(it->second);
    ValueId v = b_.op(fresh(name), op, a, b);
    memo_[key] = v;
    return Operand::of(v);
  }

  std::vector<Operand> exprs(size_t seg, const std::vector<SizeExpr> &es, const std::string &name, const char *what) {
    std::vector<Operand> out;
    for (size_t d = 0; d < es.size(); ++d) out.push_back(expr(seg, es[d], name + "_" + what + std::to_string(d)));
    return out;
  }

  void segment(size_t i) {
    const Segment &s = f_.segments[i];
    const fusion::SegmentPlan &sp = a_.segments[i];
    std::string sname = s.name.empty() ? "seg" + std::to_string(i) : s.name;
    size_t first = b_.program().body.size();
    body(i, s, sp, sname);
    auto &stmts = b_.program().body;
    if (first < stmts.size())
      stmts[first].comments.leading.push_back(" segments[" + std::to_string(i) + "]" + (s.name.empty() ? "" : " (" + s.name + ")") +
                                              (s.kernel ? ": kernel @" + *s.kernel : ": views only"));
  }

  void body(size_t i, const Segment &s, const fusion::SegmentPlan &sp, const std::string &sname) {
    for (const TensorSpec &o : s.outputs) {
      const fusion::TensorInfo &t = a_.tensors.at(o.name);
      if (t.segment != static_cast<int>(i)) continue;  // a fusion output allocated before
      if (t.kind == TensorKind::View) {
        values_[o.name] = b_.view(o.name, Operand::of(values_.at(t.base)), exprs(i, o.extents, o.name, "d"),
                                  exprs(i, o.strides, o.name, "s"));
      } else {
        values_[o.name] = b_.alloc(o.name, o.dtype, exprs(i, o.extents, o.name, "d"), exprs(i, o.strides, o.name, "s"),
                                   (t.flags & HJ_ALLOC_ZERO_INIT) != 0, (t.flags & HJ_ALLOC_RESETS_TO_ZERO) != 0);
      }
    }
    for (const fusion::Intermediate &m : sp.intermediates) {
      const TensorSpec &e = s.summary[m.entry];
      values_[m.irName] = b_.alloc(m.irName, e.dtype, exprs(i, e.extents, m.irName, "d"), exprs(i, e.strides, m.irName, "s"),
                                   (m.flags & HJ_ALLOC_ZERO_INIT) != 0, (m.flags & HJ_ALLOC_RESETS_TO_ZERO) != 0);
    }
    if (sp.kernel >= 0) {
      const Kernel &k = f_.kernels[sp.kernel];
      std::array<Operand, 3> grid, block;
      static const char *axes[] = {"x", "y", "z"};
      for (int d = 0; d < 3; ++d) grid[d] = expr(i, s.grid[d], sname + "_grid_" + axes[d]);
      for (int d = 0; d < 3; ++d) block[d] = expr(i, s.block[d], sname + "_block_" + axes[d]);
      Operand smem = expr(i, s.smem, sname + "_smem");
      std::vector<Operand> args;
      for (const std::string &n : sp.tensorArgs)
        args.push_back(Operand::of(sp.local.count(n) ? values_.at(sp.local.at(n)) : values_.at(n)));
      for (size_t k2 = 0; k2 < s.scalars.size(); ++k2) {
        Operand o = expr(i, s.scalars[k2], sname + "_scalar" + std::to_string(k2));
        DType want = k.params[sp.tensorArgs.size() + k2].dtype;
        if (o.kind == Operand::Kind::Int && isFloat(want)) o = Operand::floating(static_cast<double>(o.i));
        args.push_back(o);
      }
      b_.launch(KernelId{static_cast<uint32_t>(sp.kernel)}, grid, block, smem, std::move(args));
      b_.program().body.back().origin = (f_.file.empty() ? std::string() : f_.file + ": ") + "segments[" +
                                        std::to_string(i) + "]" + (s.name.empty() ? "" : " (" + s.name + ")");
    }
    for (const fusion::Intermediate &m : sp.intermediates) b_.free(Operand::of(values_.at(m.irName)));
    for (const std::string &n : sp.frees) b_.free(Operand::of(values_.at(n)));
  }

  const Fusion &f_;
  const FusionAnalysis &a_;
  ProgramBuilder b_;
  std::map<std::string, ValueId> values_;
  std::map<std::string, ValueId> memo_;  // "op a, b" -> the value that computes it
  std::set<std::string> used_;
};

}  // namespace

Expected<Program> lowerFusion(const Fusion &f) {
  auto a = fusion::analyzeFusion(f);
  if (!a) return a.error();
  Program p = Lowerer(f, *a).run();
  Diagnostics d = verify(p);
  if (!d.empty())
    return Error{HJ_ERR_INTERNAL, "the lowered program of fusion '" + f.name + "' does not verify (a hostjit bug):\n" +
                                      d.format(p.filename, nullptr) + print(p)};
  return p;
}

}  // namespace hostjit
