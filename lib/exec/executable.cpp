// executable.cpp - Executable::run: arguments checked, the raw entry called
// (eagerly or in graph mode), outputs made owning.
#include "hostjit/exec/executable.h"

#include "hostjit/exec/scratch.h"

namespace hostjit {

void packScalars(std::span<const ScalarArg> scalars, hj_value *out) {
  for (size_t i = 0; i < scalars.size(); ++i) out[i] = scalars[i].value;
}

Executable::Executable(std::shared_ptr<const Plan> plan, std::shared_ptr<Runtime> rt,
                       std::shared_ptr<KernelTable> kernels)
    : plan_(std::move(plan)), rt_(std::move(rt)), kernels_(std::move(kernels)) {
  sig_ = GraphSignature::of(*plan_, rt_);
}

Expected<std::vector<Tensor>> Executable::run(std::span<const DLTensor *const> inputs,
                                              std::span<const ScalarArg> scalars, const StaticInputs *bound) {
  const Plan &plan = *plan_;
  if (bound && (bound->programId != sig_->programId || bound->bound.size() != plan.inputs.size()))
    return Error{HJ_ERR_INVALID_ARGUMENT, "@" + plan.funcName + ": the static inputs were bound for another program"};
  // A graph-mode caller that calls again with the DLTensors of its last
  // call has had them checked: its per-call cost grows less with them.
  bool checkedBefore = graph_ && !bound && inputs.size() == plan.inputs.size() &&
                       sameCheckedInputs(*sig_, inputs.data(), inputs.size());
  auto ok = checkArguments(plan, inputs.data(), inputs.size(), scalars.data(), scalars.size(), rt_->device(),
                           /*tensors=*/!checkedBefore, bound ? bound->bound.data() : nullptr);
  if (!ok) return ok.error();
  Scratch<hj_value, 16> sv(scalars.size());
  packScalars(scalars, sv.data());
  Scratch<void *, 16> outData(plan.outputs.size());
  Scratch<int64_t, 64> outDims(outputDimSlots(plan));
  hj_context *ctx = rt_->context();
  hj_range_push(ctx, plan.funcName.c_str());
  int32_t st = graph_ ? callInGraphMode(ctx, plan, *sig_, inputs.data(), sv.data(), outData.data(), outDims.data(),
                                        [&] { return call(ctx, inputs.data(), sv.data(), outData.data(), outDims.data()); },
                                        bound, false, /*checked=*/true)
                      : call(ctx, inputs.data(), sv.data(), outData.data(), outDims.data());
  hj_range_pop(ctx);
  if (st) return runtimeError(st);
  return makeOutputs(rt_, plan, outData.data(), outDims.data());
}

Expected<StaticInputs> Executable::bindStatic(const DLTensor *const *inputs, std::span<const uint32_t> which) const {
  for (uint32_t i : which)
    if (i < plan_->inputs.size() && inputs)
      if (auto ok = checkTensorArgument(*plan_, i, inputs[i], rt_->device()); !ok) return ok.error();
  return hostjit::bindStatic(*plan_, *sig_, inputs, which);
}

int32_t Executable::reserveGraph(hj_context *ctx, const DLTensor *const *inputs, const hj_value *scalars) const {
  Scratch<void *, 16> outData(plan_->outputs.size());
  Scratch<int64_t, 64> outDims(outputDimSlots(*plan_));
  return callInGraphMode(ctx, *plan_, *sig_, inputs, scalars, outData.data(), outDims.data(),
                         [&] { return call(ctx, inputs, scalars, outData.data(), outDims.data()); }, nullptr,
                         /*reserve=*/true);
}

Expected<void> Executable::setGraphSizesChange(bool on) {
  if (int32_t st = hj_graph_sizes_change(rt_->context(), &sig_->programId, sizeof sig_->programId, on ? 1 : 0))
    return runtimeError(st);
  sizesChange_ = on;
  return {};
}

Expected<void> Executable::reserveGraph(std::span<const DLTensor *const> inputs, std::span<const ScalarArg> scalars) {
  auto ok = checkArguments(*plan_, inputs.data(), inputs.size(), scalars.data(), scalars.size(), rt_->device());
  if (!ok) return ok.error();
  Scratch<hj_value, 16> sv(scalars.size());
  packScalars(scalars, sv.data());
  if (int32_t st = reserveGraph(rt_->context(), inputs.data(), sv.data())) return runtimeError(st);
  return {};
}

}  // namespace hostjit
