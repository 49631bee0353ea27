// evaluator.cpp - interprets a Plan through the runtime's C ABI.
#include "hostjit/exec/evaluator.h"

#include <cstring>

#include "hostjit/exec/plan_eval.h"
#include "hostjit/exec/scratch.h"

namespace hostjit {


void packScalars(std::span<const ScalarArg> scalars, hj_value *out) {
  for (size_t i = 0; i < scalars.size(); ++i) out[i] = scalars[i].value;
}

Expected<Evaluator> Evaluator::create(const Program &p, std::shared_ptr<Runtime> rt) {
  auto plan = makePlan(p);
  if (!plan) return plan.error();
  Evaluator e;
  e.plan_ = std::make_shared<const Plan>(std::move(*plan));
  auto kt = KernelTable::load(rt, *e.plan_);
  if (!kt) return kt.error();
  e.kernels_ = *kt;
  e.sig_ = GraphSignature::of(*e.plan_, rt);
  e.rt_ = std::move(rt);
  return e;
}

Evaluator Evaluator::fromPlan(std::shared_ptr<const Plan> plan, std::shared_ptr<Runtime> rt,
                              std::shared_ptr<KernelTable> kernels) {
  Evaluator e;
  e.plan_ = std::move(plan);
  e.sig_ = GraphSignature::of(*e.plan_, rt);
  e.rt_ = std::move(rt);
  e.kernels_ = std::move(kernels);
  return e;
}

Expected<std::vector<Tensor>> Evaluator::run(std::span<const DLTensor *const> inputs,
                                             std::span<const ScalarArg> scalars) {
  const Plan &plan = *plan_;
  auto ok = checkArguments(plan, inputs.data(), inputs.size(), scalars.data(), scalars.size(), rt_->device());
  if (!ok) return ok.error();
  Scratch<hj_value, 16> sv(scalars.size());
  packScalars(scalars, sv.data());
  Scratch<void *, 16> outData(plan.outputs.size());
  Scratch<int64_t, 64> outDims(outputDimSlots(plan));
  int32_t st = graph_ ? callGraph(rt_->context(), inputs.data(), sv.data(), outData.data(), outDims.data())
                      : call(rt_->context(), inputs.data(), sv.data(), outData.data(), outDims.data());
  if (st) return runtimeError(st);
  return makeOutputs(rt_, plan, outData.data(), outDims.data());
}

int32_t Evaluator::call(hj_context *ctx, const DLTensor *const *inputs, const hj_value *scalars, void **outData,
                        int64_t *outDims) const {
  const Plan &plan = *plan_;
  const hj_kernel_table *table = kernels_->get();
  Scratch<PlanReg, 128> regs(plan.exprs.size());
  if (int32_t st = evaluateExprs(plan, ctx, inputs, scalars, regs.data())) return st;

  // Buffers in allocation order (slot order); a freed buffer's entry is NULL.
  Scratch<void *, 32> slots(plan.numSlots);
  for (uint32_t i = 0; i < plan.numSlots; ++i) slots[i] = nullptr;
  Scratch<int64_t, 8> indices(plan.loops.size());  // each loop's current index
  int32_t status = HJ_OK;
  for (size_t pc = 0; pc < plan.steps.size(); ++pc) {
    const PlanStep &s = plan.steps[pc];
    switch (s.kind) {
      case PlanStep::Kind::Collective: {
        auto pointer = [&](const PlanArg &a) -> void * {
          switch (a.kind) {
            case PlanArg::Kind::Input: return static_cast<char *>(inputs[a.index]->data) + inputs[a.index]->byte_offset;
            case PlanArg::Kind::Buffer: return slots[a.index];
            default: return nullptr;
          }
        };
        status = hj_collective(ctx, s.kernel, pointer(s.args[0]), static_cast<uint64_t>(regs[s.dims[2]].i),
                               pointer(s.args[1]), static_cast<uint64_t>(regs[s.dims[3]].i),
                               static_cast<uint64_t>(regs[s.dims[0]].i), static_cast<uint32_t>(s.dtype), s.flags,
                               regs[s.dims[1]].i, s.site.c_str());
        break;
      }
      case PlanStep::Kind::SetStream: status = hj_set_stream(ctx, s.index); break;
      case PlanStep::Kind::Use: status = hj_record_use(ctx, slots[s.slot]); break;
      case PlanStep::Kind::EventRecord: status = hj_event_record(ctx, s.index); break;
      case PlanStep::Kind::EventWait: status = hj_event_wait(ctx, s.index); break;
      case PlanStep::Kind::StreamSync: status = hj_stream_sync(ctx); break;
      case PlanStep::Kind::LoopBegin: {
        const PlanLoop &l = plan.loops[s.loop];
        indices[s.loop] = regs[l.lo].i;
        if (indices[s.loop] >= regs[l.hi].i) pc = l.end;
        else status = evaluateLoopExprs(plan, s.loop, ctx, indices.data(), regs.data());
        break;
      }
      case PlanStep::Kind::LoopEnd: {
        const PlanLoop &l = plan.loops[s.loop];
        if (++indices[s.loop] < regs[l.hi].i) {  // below hi, so no overflow
          status = evaluateLoopExprs(plan, s.loop, ctx, indices.data(), regs.data());
          pc = l.begin;
        }
        break;
      }
      case PlanStep::Kind::Move: {
        Scratch<void *, 8> moved(s.from.size());
        for (size_t k = 0; k < s.from.size(); ++k) moved[k] = slots[s.from[k]];
        for (uint32_t from : s.from) slots[from] = nullptr;
        for (size_t k = 0; k < s.to.size(); ++k) slots[s.to[k]] = moved[k];
        break;
      }
      case PlanStep::Kind::Alloc: {
        int64_t sizes[kMaxRank], strides[kMaxRank];
        for (size_t d = 0; d < s.sizes.size(); ++d) sizes[d] = regs[s.sizes[d]].i;
        for (size_t d = 0; d < s.strides.size(); ++d) strides[d] = regs[s.strides[d]].i;
        status = hj_alloc(ctx, sizes, s.strides.empty() ? nullptr : strides, static_cast<uint32_t>(s.sizes.size()),
                          static_cast<uint32_t>(s.dtype), s.flags, s.name.c_str(), &slots[s.slot]);
        break;
      }
      case PlanStep::Kind::Free: {
        void *p = slots[s.slot];
        slots[s.slot] = nullptr;  // released even when hj_free reports an error
        status = hj_free(ctx, p);
        break;
      }
      case PlanStep::Kind::Launch: {
        int64_t dims[7];
        for (int d = 0; d < 7; ++d) dims[d] = regs[s.dims[d]].i;
        // One 8-byte word per argument, 1 + 2 * rank for a tensor struct.
        size_t words = 0;
        for (const PlanArg &arg : s.args) words += 1 + arg.dims.size();
        Scratch<uint64_t, 64> values(words);
        Scratch<void *, 32> params(s.args.size());
        size_t word = 0;
        for (size_t a = 0; a < s.args.size(); ++a) {
          const PlanArg &arg = s.args[a];
          void *slot = &values[word];
          params[a] = slot;
          for (size_t d = 0; d < arg.dims.size(); ++d) std::memcpy(&values[word + 1 + d], &regs[arg.dims[d]].i, 8);
          word += 1 + arg.dims.size();
          switch (arg.kind) {
            case PlanArg::Kind::Input: {
              const DLTensor *t = inputs[arg.index];
              void *p = static_cast<char *>(t->data) + t->byte_offset;
              std::memcpy(slot, &p, sizeof p);
              break;
            }
            case PlanArg::Kind::Buffer: std::memcpy(slot, &slots[arg.index], sizeof(void *)); break;
            case PlanArg::Kind::Expr: {
              uint64_t bits = exprArgBits(regs[arg.index], arg.param);
              std::memcpy(slot, &bits, 8);
              break;
            }
          }
        }
        status = hj_launch(ctx, table, s.kernel, dims, params.data(), s.site.c_str());
        break;
      }
    }
    if (status != HJ_OK) {
      hj_free_all_on_error(ctx, slots.data(), plan.numSlots);
      return status;
    }
  }
  for (const PlanOutput &o : plan.outputs) {
    *outData++ = slots[o.slot];
    for (uint32_t e : o.sizes) *outDims++ = regs[e].i;
    for (uint32_t e : o.strides) *outDims++ = regs[e].i;
  }
  return HJ_OK;
}

}  // namespace hostjit
