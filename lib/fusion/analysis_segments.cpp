// analysis_segments.cpp - the fusion analysis of each segment: its outputs,
// summary and scratch, and its launch (the kernel's parameters) or matmul.
#include "analyzer.h"

#include <cmath>

#include "hostjit/alloc_flags.h"
#include "hostjit/ir/scalar_semantics.h"
#include "hostjit/runtime.h"

namespace hostjit::fusion::analysis_detail {

namespace {

// What the runtime would refuse in a summary or scratch entry's flags.
const char *allocFlagsProblem(const TensorSpec &e) {
  return hj_alloc_flags_problem((e.zeroInit ? HJ_ALLOC_ZERO_INIT : 0u) | (e.resetsToZero ? HJ_ALLOC_RESETS_TO_ZERO : 0u));
}

}  // namespace

void Analyzer::segment(size_t i) {
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
    if (const char *why = allocFlagsProblem(e)) error(ep, why);
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
    if (const char *why = allocFlagsProblem(e)) error(ep, why);
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

void Analyzer::matmulSegment(size_t i, const Segment &s, SegmentPlan &sp, const std::string &path,
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
  Found bias;
  if (m.bias) {
    bias = findTensor(i, s.inputs[2], visible);
    if (bias.ok && (bias.rank != 1 || bias.dtype != c.dtype))
      error(path, "matmul's bias ('" + s.inputs[2] + "') must be a rank-1 tensor of the output's dtype, " +
                      dtypeName(c.dtype));
  }
  if (a.rank >= 2 && a.rank <= 3 && b.rank >= 2 && b.rank <= 3 && c.rank >= 2 && c.rank <= 3)
    matmulShapes(s, m, path, a, b, {true, c.dtype, c.rank, literalDims(s.outputs[0].extents)}, bias);
  if (!std::isfinite(m.alpha)) error(path + ".matmul.alpha", "must be finite");
  sizeExpr(i, m.workspaceBytes, path + ".matmul.workspace_bytes", visible, 0, "a workspace size", HJ_MAX_BUFFER_BYTES);
}

void Analyzer::matmulShapes(const Segment &s, const MatmulSpec &m, const std::string &path, const Found &a,
                            const Found &b, const Found &c, const Found &bias) {
  if (a.dims.size() < 2 || b.dims.size() < 2 || c.dims.size() < 2) return;
  auto show = [](std::optional<int64_t> x) { return x ? std::to_string(*x) : std::string("?"); };
  // A dim the fusion fixes at 0 fails every call: the runtime takes 1 to 2^40.
  const Found *operands[] = {&a, &b, &c};
  const std::string names[] = {"A ('" + s.inputs[0] + "')", "B ('" + s.inputs[1] + "')",
                               "output ('" + s.outputs[0].name + "')"};
  for (int x = 0; x < 3; ++x)
    for (size_t d = 0; d < operands[x]->dims.size(); ++d)
      if (operands[x]->dims[d] == 0)
        error(path, "matmul's " + names[x] + " has dim " + std::to_string(d) +
                        " of 0; a matmul's batches, rows and columns are at least 1");
  auto dim = [](const Found &t, int fromEnd) { return t.dims[t.dims.size() - fromEnd]; };
  auto am = dim(a, m.transposeA ? 1 : 2), ak = dim(a, m.transposeA ? 2 : 1);
  auto bk = dim(b, m.transposeB ? 1 : 2), bn = dim(b, m.transposeB ? 2 : 1);
  auto cm = dim(c, 2), cn = dim(c, 1);
  auto flag = [](const char *key, bool v) { return std::string(key) + " is " + (v ? "true" : "false"); };
  if (ak && bk && *ak != *bk)
    error(path + ".inputs", "matmul: op(A) has " + show(ak) + " columns and op(B) " + show(bk) + " rows; they must agree (" +
                                flag("transpose_a", m.transposeA) + ", " + flag("transpose_b", m.transposeB) + ")");
  if ((am && cm && *am != *cm) || (bn && cn && *bn != *cn))
    error(path + ".outputs[0].extents", "matmul: the output is " + show(cm) + " x " + show(cn) + "; op(A) op(B) is " +
                                            show(am) + " x " + show(bn));
  if (m.bias && bias.ok && bias.dims.size() == 1 && bias.dims[0] && bn && *bias.dims[0] != *bn)
    error(path + ".inputs", "matmul's bias ('" + s.inputs[2] + "') has " + show(bias.dims[0]) + " elements; op(B) has " +
                                show(bn) + " columns");
}

}  // namespace hostjit::fusion::analysis_detail
