// kernel_executor.cpp - KernelExecutor: one segment of a fusion lowered
// alone and run through its plan.
#include "hostjit/fusion/kernel_executor.h"

#include <algorithm>
#include <cstring>
#include <map>

#include "hostjit/exec/plan_eval.h"
#include "hostjit/exec/scratch.h"

namespace hostjit {

namespace {

using fusion::FusionAnalysis;
using fusion::TensorKind;

std::string at(const std::string &field, size_t i) { return field + "[" + std::to_string(i) + "]"; }

std::vector<int64_t> contiguous(const std::vector<int64_t> &sizes) {
  std::vector<int64_t> s(sizes.size());
  int64_t acc = 1;
  for (size_t d = sizes.size(); d-- > 0;) {
    s[d] = acc;
    acc *= sizes[d];
  }
  return s;
}

std::vector<int64_t> stridesOf(const DLTensor &t) {
  std::vector<int64_t> sizes(t.shape, t.shape + t.ndim);
  if (!t.strides) return contiguous(sizes);
  return {t.strides, t.strides + t.ndim};
}

std::string list(const std::vector<int64_t> &v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

// The signature of a fusion as a Plan (inputs, scalars, kernels), for
// argument checks, input generation and kernel loading.
Plan signaturePlan(const Fusion &f) {
  Plan p;
  p.funcName = f.name;
  for (const FusionInput &in : f.inputs) {
    if (in.isTensor) p.inputs.push_back({in.name, in.dtype, in.dims});
    else p.scalars.push_back({in.name, in.dtype});
  }
  for (const Kernel &k : f.kernels) p.kernels.push_back(planKernel(k, f.file));
  return p;
}

Error bad(std::string m) { return Error{HJ_ERR_INVALID_ARGUMENT, std::move(m)}; }

// Checks a tensor against what the segment expects of it.
std::optional<Error> checkTensor(const DLTensor *t, const std::string &who, DType dtype, const std::vector<int64_t> *sizes,
                                 const std::vector<int64_t> *strides, uint32_t rank, DLDevice device) {
  if (!t) return bad(who + ": no tensor given");
  if (t->ndim != static_cast<int32_t>(rank))
    return bad(who + ": expected rank " + std::to_string(rank) + ", got rank " + std::to_string(t->ndim));
  if (t->dtype.code != dlpackCode(dtype) || t->dtype.bits != dlpackBits(dtype) || t->dtype.lanes != 1)
    return bad(who + ": expected dtype " + dtypeName(dtype));
  if (t->device.device_type != device.device_type || t->device.device_id != device.device_id)
    return bad(who + ": is on another device than the runtime");
  std::vector<int64_t> shape(t->shape, t->shape + t->ndim);
  if (sizes && shape != *sizes) return bad(who + ": expected shape " + list(*sizes) + ", got " + list(shape));
  if (strides && stridesOf(*t) != *strides)
    return bad(who + ": expected strides " + list(*strides) + ", got " + list(stridesOf(*t)));
  return std::nullopt;
}

}  // namespace

std::vector<int64_t> effectiveStrides(const BufferSpec &b) { return b.strides.empty() ? contiguous(b.sizes) : b.strides; }

Expected<KernelExecutor::Runner> KernelExecutor::makeRunner(const Fusion &f, const fusion::FusionAnalysis &a,
                                                           size_t segment, bool supplied,
                                                           const std::shared_ptr<Runtime> &rt,
                                                           const std::shared_ptr<KernelTable> &kernels) {
  auto lowered = lowerSegment(f, a, segment, supplied);
  if (!lowered) return lowered.error();
  Runner r;
  r.lowered = std::move(*lowered);
  std::vector<ExprId> keep;
  for (const auto *shapes : {&r.lowered.outputs, &r.lowered.intermediates})
    for (const SegmentProgram::Shape &sh : *shapes) {
      keep.insert(keep.end(), sh.extentExprs.begin(), sh.extentExprs.end());
      keep.insert(keep.end(), sh.strideExprs.begin(), sh.strideExprs.end());
      keep.insert(keep.end(), sh.offsetExprs.begin(), sh.offsetExprs.end());
    }
  if (a.segments[segment].kernel >= 0) {
    keep.insert(keep.end(), r.lowered.dims.begin(), r.lowered.dims.end());
    keep.insert(keep.end(), r.lowered.scalars.begin(), r.lowered.scalars.end());
  }
  auto plan = makePlan(r.lowered.program, keep);
  if (!plan) return plan.error();
  r.plan = std::make_shared<const Plan>(std::move(*plan));
  r.eval = std::make_shared<const Evaluator>(Evaluator::fromPlan(r.plan, rt, kernels));
  return r;
}

Expected<KernelExecutor> KernelExecutor::create(std::shared_ptr<const Fusion> f, size_t segment, std::shared_ptr<Runtime> rt,
                                                std::shared_ptr<KernelTable> kernels) {
  if (!f) return bad("KernelExecutor::create: no fusion");
  auto a = fusion::analyzeFusion(*f);
  if (!a) return a.error();
  if (segment >= f->segments.size())
    return bad("KernelExecutor::create: segment " + std::to_string(segment) + " does not exist (the fusion has " +
               std::to_string(f->segments.size()) + ")");
  if (!kernels) {
    auto kt = KernelTable::load(rt, signaturePlan(*f));
    if (!kt) return kt.error();
    kernels = *kt;
  }
  KernelExecutor e;
  e.f_ = std::move(f);
  e.a_ = std::make_shared<const FusionAnalysis>(std::move(*a));
  e.index_ = segment;
  e.rt_ = rt;
  e.kernels_ = std::move(kernels);
  for (bool supplied : {false, true}) {
    auto r = makeRunner(*e.f_, *e.a_, segment, supplied, rt, e.kernels_);
    if (!r) return r.error();
    (supplied ? e.supplied_ : e.fallback_) = std::move(*r);
  }
  return e;
}

const Segment &KernelExecutor::segment() const { return f_->segments[index_]; }

Expected<SegmentCall> KernelExecutor::prepare(std::span<const DLTensor *const> inputs,
                                              std::span<const ScalarArg> scalars) const {
  const Segment &s = f_->segments[index_];
  const fusion::SegmentPlan &sp = a_->segments[index_];
  std::string path = at("segments", index_);
  if (inputs.size() != s.inputs.size())
    return bad(path + ": takes " + std::to_string(s.inputs.size()) + " input tensors, got " + std::to_string(inputs.size()));
  if (scalars.size() != a_->scalarTypes.size())
    return bad(path + ": takes the fusion's " + std::to_string(a_->scalarTypes.size()) + " scalar inputs, got " +
               std::to_string(scalars.size()));
  for (size_t k = 0; k < scalars.size(); ++k)
    if (scalars[k].type != a_->scalarTypes[k])
      return bad(path + ": scalar input " + std::to_string(k) + " must be " + dtypeName(a_->scalarTypes[k]));
  for (size_t k = 0; k < inputs.size(); ++k) {
    const fusion::TensorInfo &t = a_->tensors.at(s.inputs[k]);
    if (!inputs[k] || inputs[k]->ndim != static_cast<int32_t>(t.rank))
      return bad(path + at(".inputs", k) + " ('" + s.inputs[k] + "'): expected a tensor of rank " + std::to_string(t.rank));
  }
  // The plan's expressions over the inputs; the outputs, not made yet, are
  // placeholders whose memory and shape no expression reads (views of
  // their specs stand for them), so the plan's checks, which compare those
  // views with their roots, wait for the call with the real tensors.
  const Plan &plan = *fallback_.plan;
  std::vector<DLTensor> holders(s.outputs.size());
  std::vector<int64_t> zeros(kMaxRank, 0);
  std::vector<const DLTensor *> given(inputs.begin(), inputs.end());
  for (size_t k = 0; k < s.outputs.size(); ++k) {
    holders[k].ndim = static_cast<int32_t>(s.outputs[k].extents.size());
    holders[k].shape = zeros.data();
    given.push_back(&holders[k]);
  }
  Scratch<hj_value, 16> sv(scalars.size());
  packScalars(scalars, sv.data());
  Scratch<PlanReg, 128> regs(plan.exprs.size());
  if (int32_t st = evaluateExprs(plan, rt_->context(), given.data(), sv.data(), regs.data(), /*checks=*/false))
    return runtimeError(st);
  size_t kept = 0;
  auto next = [&] { return regs[plan.kept[kept++].index]; };
  auto spec = [&](const SegmentProgram::Shape &sh, std::string name, DType dtype, uint32_t flags) {
    BufferSpec b{std::move(name), dtype, {}, {}, flags};
    for (size_t d = 0; d < sh.extentExprs.size(); ++d) b.sizes.push_back(next().i);
    for (size_t d = 0; d < sh.strideExprs.size(); ++d) b.strides.push_back(next().i);
    if (!sh.offsetExprs.empty()) b.offset = next().i;
    return b;
  };
  SegmentCall call;
  for (size_t k = 0; k < s.outputs.size(); ++k) {
    const TensorSpec &o = s.outputs[k];
    const fusion::TensorInfo &t = a_->tensors.at(o.name);
    call.outputs.push_back(spec(fallback_.lowered.outputs[k], o.name, o.dtype, t.kind == TensorKind::Buffer ? t.flags : 0u));
  }
  for (size_t k = 0; k < sp.intermediates.size(); ++k) {
    const fusion::Intermediate &m = sp.intermediates[k];
    call.intermediates.push_back(
        spec(fallback_.lowered.intermediates[k], m.irName, s.summary[m.entry].dtype, m.flags));
  }
  if (sp.kernel >= 0) {
    for (int64_t &d : call.dims) d = next().i;
    const Kernel &k = f_->kernels[sp.kernel];
    for (size_t j = 0; j < s.scalars.size(); ++j) {
      hj_value v{};
      uint64_t bits = exprArgBits(next(), paramKind(k.params[sp.tensorArgs.size() + j]));
      std::memcpy(&v, &bits, sizeof v);
      call.scalars.push_back(v);
    }
  }
  return call;
}

Expected<void> KernelExecutor::run(Runtime &rt, std::span<const DLTensor *const> inputs, std::span<const ScalarArg> scalars,
                                   std::span<const DLTensor *const> outputs,
                                   std::span<const DLTensor *const> intermediates) const {
  const Segment &s = f_->segments[index_];
  std::string path = at("segments", index_);
  DLDevice dev = rt.device();
  auto call = prepare(inputs, scalars);
  if (!call) return call.error();
  for (size_t k = 0; k < inputs.size(); ++k) {
    const fusion::TensorInfo &t = a_->tensors.at(s.inputs[k]);
    if (auto e = checkTensor(inputs[k], path + at(".inputs", k) + " ('" + s.inputs[k] + "')", t.dtype, nullptr, nullptr,
                             t.rank, dev))
      return *e;
  }
  if (outputs.size() != s.outputs.size())
    return bad(path + ": has " + std::to_string(s.outputs.size()) + " outputs, got " + std::to_string(outputs.size()));
  for (size_t k = 0; k < outputs.size(); ++k) {
    const BufferSpec &b = call->outputs[k];
    std::vector<int64_t> st = effectiveStrides(b);
    if (auto e = checkTensor(outputs[k], path + at(".outputs", k) + " ('" + b.name + "')", b.dtype, &b.sizes, &st,
                             static_cast<uint32_t>(b.sizes.size()), dev))
      return *e;
  }
  if (!intermediates.empty() && intermediates.size() != call->intermediates.size())
    return bad(path + ": the summary needs " + std::to_string(call->intermediates.size()) + " intermediates, got " +
               std::to_string(intermediates.size()));
  for (size_t k = 0; k < intermediates.size(); ++k) {
    const BufferSpec &b = call->intermediates[k];
    std::vector<int64_t> st = effectiveStrides(b);
    if (auto e = checkTensor(intermediates[k], path + " intermediate " + std::to_string(k) + " ('" + b.name + "')", b.dtype,
                             &b.sizes, &st, static_cast<uint32_t>(b.sizes.size()), dev))
      return *e;
  }
  if (int32_t st = launch(rt, inputs, scalars, outputs, intermediates)) return runtimeError(st);
  return {};
}

int32_t KernelExecutor::launch(Runtime &rt, std::span<const DLTensor *const> inputs, std::span<const ScalarArg> scalars,
                               std::span<const DLTensor *const> outputs,
                               std::span<const DLTensor *const> intermediates) const {
  if (a_->segments[index_].kernel < 0 && !a_->segments[index_].matmul) return HJ_OK;
  // The segment program's tensors: inputs, outputs, then (supplied) intermediates.
  const Runner &r = intermediates.empty() ? fallback_ : supplied_;
  Scratch<const DLTensor *, 16> given(inputs.size() + outputs.size() + intermediates.size());
  size_t n = 0;
  for (const auto *list : {&inputs, &outputs, &intermediates})
    for (const DLTensor *t : *list) given[n++] = t;
  Scratch<hj_value, 16> sv(scalars.size());
  packScalars(scalars, sv.data());
  return r.eval->call(rt.context(), given.data(), sv.data(), nullptr, nullptr);
}

}  // namespace hostjit
