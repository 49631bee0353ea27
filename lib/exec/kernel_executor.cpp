// kernel_executor.cpp - KernelExecutor and FusionExecutor: a fusion run segment by segment, without Host IR.
#include "hostjit/exec/kernel_executor.h"

#include <cstring>
#include <algorithm>
#include <map>

#include "hostjit/fusion/analysis.h"
#include "hostjit/ir/scalar_semantics.h"
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

std::vector<int64_t> effectiveStrides(const BufferSpec &b) { return b.strides.empty() ? contiguous(b.sizes) : b.strides; }

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

// A scalar while evaluating: integers (and bool) in i, f64 in f, f32 in f32;
// literals (not yet typed) in i or f.
struct Val {
  DType type = DType::i64;
  bool literal = false;
  int64_t i = 0;
  double f = 0.0;
  float f32 = 0.0f;
};

// Evaluates one segment's expressions for one call, with Host IR's semantics.
class SegmentEval {
 public:
  SegmentEval(const Fusion &f, const FusionAnalysis &a, size_t seg, std::span<const ScalarArg> scalars)
      : f_(f), a_(a), seg_(seg), scalars_(scalars) {}

  void shape(const std::string &name, std::vector<int64_t> sizes, std::vector<int64_t> strides) {
    shapes_[name] = {std::move(sizes), std::move(strides)};
  }

  Val eval(const SizeExpr &e, const std::string &path) {
    Val v;
    if (!error_.empty()) return v;
    if (auto c = fusion::foldLiterals(e)) {
      v.literal = true;
      if (c->kind == Operand::Kind::Int) v.i = c->i;
      else v.type = DType::f64, v.f = c->f;
      return v;
    }
    switch (e.kind()) {
      case SizeExpr::Kind::Scalar: {
        uint32_t k = a_.scalars.at(e.name());
        const hj_value &x = scalars_[k].value;
        v.type = a_.scalarTypes[k];
        switch (v.type) {
          case DType::i64: v.i = x.i64; break;
          case DType::i32: v.i = x.i32; break;
          case DType::f32: v.f32 = x.f32; break;
          case DType::f64: v.f = x.f64; break;
          default: v.i = x.b != 0; break;
        }
        return v;
      }
      case SizeExpr::Kind::Size:
      case SizeExpr::Kind::Stride: {
        auto it = shapes_.find(e.name());
        HOSTJIT_INVARIANT(it != shapes_.end());  // the analysis saw to it
        const auto &[sizes, strides] = it->second;
        v.i = e.kind() == SizeExpr::Kind::Size ? sizes.at(e.dim()) : strides.at(e.dim());
        return v;
      }
      case SizeExpr::Kind::Binary: {
        Val x = eval(e.lhs(), path), y = eval(e.rhs(), path);
        DType t = x.literal ? y.type : x.type;
        Val r;
        r.type = t;
        if (t == DType::f32) {
          evalF32Op(e.op(), asF32(x), asF32(y), &r.f32, &r.i);
        } else if (isFloat(t)) {
          evalFloatOp(e.op(), t, asF64(x), asF64(y), &r.f, &r.i);
        } else if (ScalarError err = evalIntOp(e.op(), t, x.i, y.i, &r.i); err != ScalarError::None && error_.empty()) {
          error_ = path + ": " + scalarErrorText(err) + " computing '" + e.str() + "'";
        }
        return r;
      }
      default: return v;
    }
  }

  int64_t integer(const SizeExpr &e, const std::string &path) { return eval(e, path).i; }

  std::vector<int64_t> integers(const std::vector<SizeExpr> &es, const std::string &path) {
    std::vector<int64_t> out;
    for (size_t d = 0; d < es.size(); ++d) out.push_back(integer(es[d], at(path, d)));
    return out;
  }

  // The argument of a scalar parameter of type `want`.
  hj_value argument(const SizeExpr &e, DType want, const std::string &path) {
    Val v = eval(e, path);
    hj_value out{};
    switch (want) {
      case DType::f32: out.f32 = v.literal ? asF32(v) : v.f32; break;
      case DType::f64: out.f64 = v.literal ? asF64(v) : v.f; break;
      case DType::i32: out.i32 = static_cast<int32_t>(v.i); break;
      case DType::Bool: out.b = v.i != 0; break;
      default: out.i64 = v.i; break;
    }
    return out;
  }

  const std::string &error() const { return error_; }

 private:
  static float asF32(const Val &v) {
    if (!v.literal) return v.f32;
    return static_cast<float>(v.type == DType::f64 ? v.f : static_cast<double>(v.i));
  }
  static double asF64(const Val &v) { return v.literal && v.type != DType::f64 ? static_cast<double>(v.i) : v.f; }

  const Fusion &f_;
  const FusionAnalysis &a_;
  size_t seg_;
  std::span<const ScalarArg> scalars_;
  std::map<std::string, std::pair<std::vector<int64_t>, std::vector<int64_t>>> shapes_;
  std::string error_;
};

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
  e.kernels_ = std::move(kernels);
  const Segment &s = e.f_->segments[segment];
  e.site_ = (e.f_->file.empty() ? std::string() : e.f_->file + ": ") + "segments[" + std::to_string(segment) + "]" +
            (s.name.empty() ? "" : " (" + s.name + ")") + ", run by KernelExecutor";
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
  SegmentEval ev(*f_, *a_, index_, scalars);
  for (size_t k = 0; k < inputs.size(); ++k) {
    const fusion::TensorInfo &t = a_->tensors.at(s.inputs[k]);
    if (!inputs[k] || inputs[k]->ndim != static_cast<int32_t>(t.rank))
      return bad(path + at(".inputs", k) + " ('" + s.inputs[k] + "'): expected a tensor of rank " + std::to_string(t.rank));
    ev.shape(s.inputs[k], {inputs[k]->shape, inputs[k]->shape + inputs[k]->ndim}, stridesOf(*inputs[k]));
  }
  SegmentCall call;
  for (size_t k = 0; k < s.outputs.size(); ++k) {
    const TensorSpec &o = s.outputs[k];
    const fusion::TensorInfo &t = a_->tensors.at(o.name);
    BufferSpec b{o.name, o.dtype, ev.integers(o.extents, path + at(".outputs", k) + ".extents"),
                 ev.integers(o.strides, path + at(".outputs", k) + ".strides"), t.kind == TensorKind::Buffer ? t.flags : 0u};
    ev.shape(o.name, b.sizes, effectiveStrides(b));
    call.outputs.push_back(std::move(b));
  }
  std::map<size_t, const fusion::Intermediate *> byEntry;
  for (const fusion::Intermediate &m : sp.intermediates) byEntry[m.entry] = &m;
  for (size_t k = 0; k < s.summary.size(); ++k) {
    const TensorSpec &e = s.summary[k];
    if (std::any_of(s.outputs.begin(), s.outputs.end(), [&](const TensorSpec &o) { return o.name == e.name; })) continue;
    BufferSpec b{e.name, e.dtype, ev.integers(e.extents, path + at(".summary", k) + ".extents"),
                 ev.integers(e.strides, path + at(".summary", k) + ".strides"), 0};
    ev.shape(e.name, b.sizes, effectiveStrides(b));
    if (auto it = byEntry.find(k); it != byEntry.end()) {
      b.name = it->second->irName;
      b.flags = it->second->flags;
      call.intermediates.push_back(std::move(b));
    }
  }
  if (sp.kernel >= 0) {
    for (int d = 0; d < 3; ++d) call.dims[d] = ev.integer(s.grid[d], path + at(".launch.grid", d));
    for (int d = 0; d < 3; ++d) call.dims[3 + d] = ev.integer(s.block[d], path + at(".launch.block", d));
    call.dims[6] = ev.integer(s.smem, path + ".launch.smem");
    const Kernel &k = f_->kernels[sp.kernel];
    for (size_t j = 0; j < s.scalars.size(); ++j)
      call.scalars.push_back(ev.argument(s.scalars[j], k.params[sp.tensorArgs.size() + j].dtype, path + at(".scalars", j)));
  }
  if (!ev.error().empty()) return bad(ev.error());
  return call;
}

Expected<bool> KernelExecutor::run(Runtime &rt, std::span<const DLTensor *const> inputs, std::span<const ScalarArg> scalars,
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
  return launch(rt, *call, inputs, outputs, intermediates);
}

Expected<bool> KernelExecutor::launch(Runtime &rt, const SegmentCall &callRef, std::span<const DLTensor *const> inputs,
                                      std::span<const DLTensor *const> outputs,
                                      std::span<const DLTensor *const> intermediates) const {
  const fusion::SegmentPlan &sp = a_->segments[index_];
  const SegmentCall *call = &callRef;
  if (sp.kernel < 0) return true;
  hj_context *ctx = rt.context();
  // The fallback path: allocate the intermediates, as the lowered program does.
  bool own = intermediates.empty();
  Scratch<void *, 16> mine(call->intermediates.size());
  size_t allocated = 0;
  auto unwind = [&](int32_t st) {
    while (allocated-- > 0)
      if (mine[allocated]) hj_free_on_error(ctx, mine[allocated]);
    return runtimeError(st);
  };
  if (own) {
    for (const BufferSpec &b : call->intermediates) {
      mine[allocated] = nullptr;
      int32_t st = hj_alloc(ctx, b.sizes.data(), b.strides.empty() ? nullptr : b.strides.data(),
                            static_cast<uint32_t>(b.sizes.size()), static_cast<uint32_t>(b.dtype), b.flags, b.name.c_str(),
                            &mine[allocated]);
      ++allocated;
      if (st) return unwind(st);
    }
  }
  // Pack the arguments as the evaluator does: one 8-byte word per argument,
  // 1 + 2 * rank for a tensor struct.
  const Kernel &kd = f_->kernels[sp.kernel];
  size_t words = 0;
  for (const ParamType &pt : kd.params) words += pt.isStruct ? 1 + 2 * pt.rank : 1;
  Scratch<uint64_t, 64> values(words);
  Scratch<void *, 32> params(kd.params.size());
  size_t word = 0, ni = inputs.size(), no = outputs.size();
  for (size_t p = 0; p < sp.tensorArgs.size(); ++p) {
    void *data;
    std::vector<int64_t> sizes, strides;
    if (p < ni + no) {
      const DLTensor *t = p < ni ? inputs[p] : outputs[p - ni];
      data = static_cast<char *>(t->data) + t->byte_offset;
      sizes.assign(t->shape, t->shape + t->ndim);
      strides = stridesOf(*t);
    } else {
      size_t k = p - ni - no;
      const BufferSpec &b = call->intermediates[k];
      data = own ? mine[k] : static_cast<char *>(intermediates[k]->data) + intermediates[k]->byte_offset;
      sizes = b.sizes;
      strides = effectiveStrides(b);
    }
    params[p] = &values[word];
    std::memcpy(&values[word], &data, sizeof data);
    if (kd.params[p].isStruct) {
      std::memcpy(&values[word + 1], sizes.data(), 8 * sizes.size());
      std::memcpy(&values[word + 1 + sizes.size()], strides.data(), 8 * strides.size());
    }
    word += kd.params[p].isStruct ? 1 + 2 * kd.params[p].rank : 1;
  }
  for (size_t j = 0; j < call->scalars.size(); ++j) {
    size_t p = sp.tensorArgs.size() + j;
    params[p] = &values[word];
    std::memcpy(&values[word], &call->scalars[j], 8);
    ++word;
  }
  if (int32_t st = hj_launch(ctx, kernels_->get(), static_cast<uint32_t>(sp.kernel), call->dims, params.data(), site_.c_str()))
    return unwind(st);
  if (own) {
    for (size_t k = 0; k < allocated; ++k) {
      void *ptr = mine[k];
      mine[k] = nullptr;  // released even when hj_free reports an error
      if (int32_t st = hj_free(ctx, ptr)) return unwind(st);
    }
  }
  return true;
}

Expected<FusionExecutor> FusionExecutor::create(const Fusion &f, std::shared_ptr<Runtime> rt, Options options) {
  FusionExecutor fe;
  fe.options_ = options;
  fe.f_ = std::make_shared<const Fusion>(f);
  auto a = fusion::analyzeFusion(*fe.f_);
  if (!a) return a.error();
  fe.a_ = std::make_shared<const FusionAnalysis>(std::move(*a));
  fe.signature_ = std::make_shared<const Plan>(signaturePlan(*fe.f_));
  auto kt = KernelTable::load(rt, *fe.signature_);
  if (!kt) return kt.error();
  for (size_t i = 0; i < f.segments.size(); ++i) {
    auto e = KernelExecutor::create(fe.f_, i, rt, *kt);
    if (!e) return e.error();
    fe.segments_.push_back(std::move(*e));
  }
  fe.rt_ = std::move(rt);
  return fe;
}

Expected<std::vector<Tensor>> FusionExecutor::run(std::span<const DLTensor *const> inputs,
                                                  std::span<const ScalarArg> scalars) {
  auto ok = checkArguments(*signature_, inputs.data(), inputs.size(), scalars.data(), scalars.size(), rt_->device());
  if (!ok) return ok.error();
  // Every tensor by name: the caller's inputs, then segment outputs. The
  // first pass computes every segment's numbers over placeholders (no data),
  // so an error is found before the first runtime call.
  struct Held {
    DLTensor t{};
    std::vector<int64_t> sizes, strides;
  };
  std::map<std::string, Held> tensors;
  for (const auto &[name, t] : a_->tensors)
    if (t.kind == TensorKind::Input) {
      Held h;
      h.t = *inputs[t.inputIndex];
      tensors[name] = std::move(h);
    }
  auto bind = [](Held &h, void *data, DType dtype, DLDevice dev, std::vector<int64_t> sizes, std::vector<int64_t> strides) {
    h.sizes = std::move(sizes);
    h.strides = std::move(strides);
    h.t = DLTensor{data, dev, static_cast<int32_t>(h.sizes.size()), DLDataType{dlpackCode(dtype), dlpackBits(dtype), 1},
                   h.sizes.data(), h.strides.data(), 0};
  };
  auto segmentInputs = [&](const Segment &s) {
    std::vector<const DLTensor *> in;
    for (const std::string &n : s.inputs) in.push_back(&tensors.at(n).t);
    return in;
  };
  DLDevice dev = rt_->device();
  std::vector<SegmentCall> calls;
  for (size_t i = 0; i < segments_.size(); ++i) {
    const Segment &s = f_->segments[i];
    auto call = segments_[i].prepare(segmentInputs(s), scalars);
    if (!call) return call.error();
    for (const BufferSpec &b : call->outputs)
      if (a_->tensors.at(b.name).segment == static_cast<int>(i))
        bind(tensors[b.name], nullptr, b.dtype, dev, b.sizes, effectiveStrides(b));
    calls.push_back(std::move(*call));
  }
  // The second pass makes the calls, keeping live buffers in allocation
  // order (a freed one's entry is NULL), as the lowered program does.
  hj_context *ctx = rt_->context();
  std::vector<void *> live;
  std::map<std::string, size_t> slot;
  auto fail = [&](const Error &e) {
    for (size_t k = live.size(); k-- > 0;)
      if (live[k]) hj_free_on_error(ctx, live[k]);
    return e;
  };
  for (size_t i = 0; i < segments_.size(); ++i) {
    const Segment &s = f_->segments[i];
    for (const BufferSpec &b : calls[i].outputs) {
      const fusion::TensorInfo &t = a_->tensors.at(b.name);
      if (t.segment != static_cast<int>(i)) continue;  // a fusion output written again
      Held &h = tensors.at(b.name);
      if (t.kind == TensorKind::View) {
        const DLTensor &base = tensors.at(t.base).t;
        h.t.data = base.data;
        h.t.byte_offset = base.byte_offset;
        continue;
      }
      void *p = nullptr;
      int32_t st = hj_alloc(ctx, b.sizes.data(), b.strides.empty() ? nullptr : b.strides.data(),
                            static_cast<uint32_t>(b.sizes.size()), static_cast<uint32_t>(b.dtype), b.flags, b.name.c_str(), &p);
      if (st) return fail(runtimeError(st));
      slot[b.name] = live.size();
      live.push_back(p);
      h.t.data = p;
    }
    std::vector<const DLTensor *> outs;
    for (const TensorSpec &o : s.outputs) outs.push_back(&tensors.at(o.name).t);
    std::vector<Held> mids;
    std::vector<const DLTensor *> midPtrs;
    size_t firstMid = live.size();
    if (options_.supplyIntermediates && a_->segments[i].kernel >= 0) {
      mids.resize(calls[i].intermediates.size());
      for (size_t k = 0; k < mids.size(); ++k) {
        const BufferSpec &b = calls[i].intermediates[k];
        void *p = nullptr;
        int32_t st = hj_alloc(ctx, b.sizes.data(), b.strides.empty() ? nullptr : b.strides.data(),
                              static_cast<uint32_t>(b.sizes.size()), static_cast<uint32_t>(b.dtype), b.flags, b.name.c_str(), &p);
        if (st) return fail(runtimeError(st));
        live.push_back(p);
        bind(mids[k], p, b.dtype, dev, b.sizes, effectiveStrides(b));
        midPtrs.push_back(&mids[k].t);
      }
    }
    // The arguments were checked and the numbers computed in the first pass.
    auto r = segments_[i].launch(*rt_, calls[i], segmentInputs(s), outs, midPtrs);
    if (!r) return fail(r.error());
    for (size_t k = firstMid; k < live.size(); ++k) {
      void *p = live[k];
      live[k] = nullptr;
      if (int32_t st = hj_free(ctx, p)) return fail(runtimeError(st));
    }
    for (const std::string &n : a_->segments[i].frees) {
      void *p = live[slot.at(n)];
      live[slot.at(n)] = nullptr;  // released even when hj_free reports an error
      if (int32_t st = hj_free(ctx, p)) return fail(runtimeError(st));
    }
  }
  std::vector<Tensor> out;
  for (const std::string &n : f_->outputs) {
    const Held &h = tensors.at(n);
    const fusion::TensorInfo &t = a_->tensors.at(n);
    out.emplace_back(rt_, h.t.data, t.dtype, t.rank, h.sizes.data(), h.strides.data());
  }
  return out;
}

}  // namespace hostjit
