// analysis.cpp - checks a Fusion and resolves what each segment allocates, passes and frees:
// the fusion as a whole (its inputs, kernels, outputs, and when each buffer is freed).
#include "analyzer.h"

#include <cmath>

#include "hostjit/ir/scalar_semantics.h"
#include "hostjit/runtime.h"

namespace hostjit::fusion::analysis_detail {

Expected<FusionAnalysis> Analyzer::run() {
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

void Analyzer::error(const std::string &path, const std::string &msg) {
  errors_.push_back((f_.file.empty() ? "" : f_.file + ": ") + path + ": " + msg);
}

std::string Analyzer::unique(const std::string &want) {
  std::string n = want;
  for (int k = 1; !used_.insert(n).second; ++k) n = want + "_" + std::to_string(k);
  return n;
}

void Analyzer::checkInputs() {
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

void Analyzer::checkKernels() {
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

void Analyzer::checkOutputs() {
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

void Analyzer::schedule() {
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

}  // namespace hostjit::fusion::analysis_detail

namespace hostjit::fusion {

Expected<FusionAnalysis> analyzeFusion(const Fusion &f) { return analysis_detail::Analyzer(f).run(); }

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
