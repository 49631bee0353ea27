// fusion_executor.cpp - FusionExecutor: a fusion's lowered plan run by the
// evaluator, each segment's launch or matmul handed to its KernelExecutor.
#include <map>
#include <unordered_set>

#include "hostjit/fusion/kernel_executor.h"
#include "hostjit/fusion/lowering.h"

namespace hostjit {

using fusion::FusionAnalysis;
using fusion::TensorKind;

// What FusionExecutor's hook does with each step of the lowered plan, and
// the tensors of the call in progress.
struct FusionExecutor::Dispatch {
  enum class Action : uint8_t {
    Run,      // the plan makes it: a segment output's allocation or free, a supplied intermediate's
    Skip,     // the segment program makes it: scratch, a matmul's workspace, a fallback intermediate
    Segment,  // a launch or matmul: the segment's KernelExecutor makes it
  };
  struct Held {
    DLTensor t{};
    std::vector<int64_t> sizes, strides;
    int64_t offset = 0;  // a view's elements past its base's start
    bool bound = false;  // t.data is this call's
  };

  std::shared_ptr<const Fusion> f;
  std::shared_ptr<const FusionAnalysis> a;
  std::shared_ptr<Runtime> rt;
  std::vector<KernelExecutor> segments;
  bool supplied = false;
  std::vector<Action> actions;                      // per plan step
  std::vector<uint32_t> segmentAt;                  // per plan step: its segment (Action::Segment)
  std::unordered_map<std::string, uint32_t> slotOf;  // buffers the plan allocates -> their slots

  // The call in progress (set by run, cleared after it).
  std::span<const ScalarArg> scalars;
  std::map<std::string, Held> tensors;
  std::vector<SegmentCall> calls;

  void classify(const Plan &plan);
  const DLTensor &resolve(const std::string &name, void *const *slots);
  int32_t step(size_t pc, void *const *slots);
};

void FusionExecutor::Dispatch::classify(const Plan &plan) {
  std::unordered_set<std::string> outputs, mids;
  std::vector<uint32_t> launching;
  for (size_t i = 0; i < a->segments.size(); ++i) {
    const fusion::SegmentPlan &sp = a->segments[i];
    outputs.insert(sp.allocs.begin(), sp.allocs.end());
    for (const fusion::Intermediate &m : sp.intermediates) mids.insert(m.irName);
    if (sp.kernel >= 0 || sp.matmul) launching.push_back(static_cast<uint32_t>(i));
  }
  std::vector<Action> bySlot(plan.numSlots, Action::Skip);
  actions.assign(plan.steps.size(), Action::Run);
  segmentAt.assign(plan.steps.size(), 0);
  size_t next = 0;
  for (size_t pc = 0; pc < plan.steps.size(); ++pc) {
    const Step &st = plan.steps[pc];
    if (const auto *al = std::get_if<step::Alloc>(&st)) {
      bool run = outputs.count(al->name) || (supplied && mids.count(al->name));
      actions[pc] = bySlot[al->slot.index] = run ? Action::Run : Action::Skip;
      if (run) slotOf[al->name] = al->slot.index;
    } else if (const auto *fr = std::get_if<step::Free>(&st)) {
      actions[pc] = bySlot[fr->slot.index];
    } else if (std::holds_alternative<step::Launch>(st) || std::holds_alternative<step::Matmul>(st)) {
      HOSTJIT_INVARIANT(next < launching.size());
      actions[pc] = Action::Segment;
      segmentAt[pc] = launching[next++];
    }
  }
  HOSTJIT_INVARIANT(next == launching.size());
  for (const std::string &n : outputs) HOSTJIT_INVARIANT(slotOf.count(n));
}

const DLTensor &FusionExecutor::Dispatch::resolve(const std::string &name, void *const *slots) {
  Held &h = tensors.at(name);
  if (h.bound) return h.t;
  const fusion::TensorInfo &t = a->tensors.at(name);
  if (t.kind == TensorKind::View) {
    const DLTensor &base = resolve(t.base, slots);
    h.t.data = base.data;
    h.t.byte_offset = base.byte_offset + static_cast<uint64_t>(h.offset) * dtypeBytes(t.dtype);
  } else {
    h.t.data = slots[slotOf.at(name)];
  }
  h.bound = true;
  return h.t;
}

int32_t FusionExecutor::Dispatch::step(size_t pc, void *const *slots) {
  switch (actions[pc]) {
    case Action::Run: return Evaluator::kRunStep;
    case Action::Skip: return HJ_OK;
    case Action::Segment: break;
  }
  size_t i = segmentAt[pc];
  const Segment &s = f->segments[i];
  const SegmentCall &call = calls[i];
  std::vector<const DLTensor *> in, out, mid;
  for (const std::string &n : s.inputs) in.push_back(&resolve(n, slots));
  for (const TensorSpec &o : s.outputs) out.push_back(&resolve(o.name, slots));
  std::vector<Held> mids(supplied ? call.intermediates.size() : 0);
  DLDevice dev = rt->device();
  for (size_t k = 0; k < mids.size(); ++k) {
    const BufferSpec &b = call.intermediates[k];
    mids[k].sizes = b.sizes;
    mids[k].strides = effectiveStrides(b);
    mids[k].t = DLTensor{slots[slotOf.at(b.name)], dev, static_cast<int32_t>(b.sizes.size()),
                         DLDataType{dlpackCode(b.dtype), dlpackBits(b.dtype), 1}, mids[k].sizes.data(),
                         mids[k].strides.data(), 0};
    mid.push_back(&mids[k].t);
  }
  return segments[i].launch(*rt, in, scalars, out, mid);
}

Expected<FusionExecutor> FusionExecutor::create(const Fusion &f, std::shared_ptr<Runtime> rt, Options options) {
  auto d = std::make_shared<Dispatch>();
  d->supplied = options.supplyIntermediates;
  d->f = std::make_shared<const Fusion>(f);
  auto a = fusion::analyzeFusion(*d->f);
  if (!a) return a.error();
  d->a = std::make_shared<const FusionAnalysis>(std::move(*a));
  auto lowered = lowerFusion(*d->f);
  if (!lowered) return lowered.error();
  auto plan = makePlan(*lowered);
  if (!plan) return plan.error();
  auto shared = std::make_shared<const Plan>(std::move(*plan));
  auto kt = KernelTable::load(rt, *shared);
  if (!kt) return kt.error();
  for (size_t i = 0; i < f.segments.size(); ++i) {
    auto e = KernelExecutor::create(d->f, i, rt, *kt);
    if (!e) return e.error();
    d->segments.push_back(std::move(*e));
  }
  d->classify(*shared);
  d->rt = rt;
  FusionExecutor fe;
  fe.signature_ = shared;
  fe.eval_ = std::make_shared<Evaluator>(Evaluator::fromPlan(
      shared, std::move(rt), *kt, [raw = d.get()](size_t pc, void *const *slots) { return raw->step(pc, slots); }));
  fe.dispatch_ = std::move(d);
  return fe;
}

Expected<std::vector<Tensor>> FusionExecutor::run(std::span<const DLTensor *const> inputs,
                                                  std::span<const ScalarArg> scalars) {
  Dispatch &d = *dispatch_;
  auto ok = checkArguments(*signature_, inputs.data(), inputs.size(), scalars.data(), scalars.size(), d.rt->device());
  if (!ok) return ok.error();
  // Every segment's numbers over placeholders (no data) before the plan
  // runs, so an error is found before the first runtime call; the hook
  // gives each tensor its memory when a launch first needs it.
  d.tensors.clear();
  d.calls.clear();
  for (const auto &[name, t] : d.a->tensors)
    if (t.kind == TensorKind::Input) {
      Dispatch::Held h;
      h.t = *inputs[t.inputIndex];
      h.bound = true;
      d.tensors[name] = std::move(h);
    }
  DLDevice dev = d.rt->device();
  for (size_t i = 0; i < d.segments.size(); ++i) {
    const Segment &s = d.f->segments[i];
    std::vector<const DLTensor *> in;
    for (const std::string &n : s.inputs) in.push_back(&d.tensors.at(n).t);
    auto call = d.segments[i].prepare(in, scalars);
    if (!call) return call.error();
    for (const BufferSpec &b : call->outputs) {
      if (d.a->tensors.at(b.name).segment != static_cast<int>(i)) continue;
      Dispatch::Held &h = d.tensors[b.name];
      h.sizes = b.sizes;
      h.strides = effectiveStrides(b);
      h.offset = b.offset;
      h.t = DLTensor{nullptr, dev, static_cast<int32_t>(h.sizes.size()), DLDataType{dlpackCode(b.dtype), dlpackBits(b.dtype), 1},
                     h.sizes.data(), h.strides.data(), 0};
    }
    d.calls.push_back(std::move(*call));
  }
  d.scalars = scalars;
  auto out = eval_->run(inputs, scalars);
  d.scalars = {};
  d.tensors.clear();
  d.calls.clear();
  return out;
}

}  // namespace hostjit
