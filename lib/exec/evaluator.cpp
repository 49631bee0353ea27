// evaluator.cpp - interprets a Plan through the runtime's C ABI.
#include "hostjit/exec/evaluator.h"

#include <cstring>

#include "hostjit/exec/plan_eval.h"
#include "hostjit/exec/scratch.h"

namespace hostjit {


Expected<Evaluator> Evaluator::create(const Program &p, std::shared_ptr<Runtime> rt) {
  auto plan = makePlan(p);
  if (!plan) return plan.error();
  auto shared = std::make_shared<const Plan>(std::move(*plan));
  auto kt = KernelTable::load(rt, *shared);
  if (!kt) return kt.error();
  return Evaluator(std::move(shared), std::move(rt), *kt);
}

Evaluator Evaluator::fromPlan(std::shared_ptr<const Plan> plan, std::shared_ptr<Runtime> rt,
                              std::shared_ptr<KernelTable> kernels) {
  return Evaluator(std::move(plan), std::move(rt), std::move(kernels));
}

Evaluator Evaluator::fromPlan(std::shared_ptr<const Plan> plan, std::shared_ptr<Runtime> rt,
                              std::shared_ptr<KernelTable> kernels, StepHook hook) {
  Evaluator e(std::move(plan), std::move(rt), std::move(kernels));
  e.hook_ = std::move(hook);
  return e;
}

namespace {

static_assert(std::is_same_v<std::variant_alternative_t<0, Arg>, InputArg> &&
              std::is_same_v<std::variant_alternative_t<1, Arg>, BufferArg> &&
              std::is_same_v<std::variant_alternative_t<2, Arg>, ValueArg>);

// One call of a plan: the registers, the buffer slots and the loop indices,
// and one member per step kind that makes that step's runtime call.
class Interpreter {
 public:
  Interpreter(const Plan &plan, hj_context *ctx, const hj_kernel_table *table, const DLTensor *const *inputs,
              PlanReg *regs, void **slots, int64_t *indices, const Evaluator::StepHook *hook)
      : plan_(plan), ctx_(ctx), table_(table), inputs_(inputs), regs_(regs), slots_(slots), indices_(indices),
        hook_(hook) {}

  // Runs every step; on a failure frees what is live and returns its status.
  int32_t run() {
    for (pc_ = 0; pc_ < plan_.steps.size(); ++pc_) {
      const Step &st = plan_.steps[pc_];
      int32_t status = hook_ ? (*hook_)(pc_, slots_) : Evaluator::kRunStep;
      if (status == Evaluator::kRunStep) switch (st.index()) {
#define HOSTJIT_STEP(name, keyword) \
  case stepIndex<step::name>():     \
    status = (*this)(*std::get_if<step::name>(&st)); \
    break;
#include "hostjit/exec/plan_steps.def"
#undef HOSTJIT_STEP
        default: status = HJ_OK; break;
      }
      if (status != HJ_OK) {
        hj_free_all_on_error(ctx_, slots_, plan_.numSlots);
        return status;
      }
    }
    return HJ_OK;
  }

  int32_t operator()(const step::Alloc &s) {
    int64_t sizes[kMaxRank], strides[kMaxRank];
    for (size_t d = 0; d < s.sizes.size(); ++d) sizes[d] = i64(s.sizes[d]);
    for (size_t d = 0; d < s.strides.size(); ++d) strides[d] = i64(s.strides[d]);
    return hj_alloc(ctx_, sizes, s.strides.empty() ? nullptr : strides, static_cast<uint32_t>(s.sizes.size()),
                    static_cast<uint32_t>(s.dtype), s.flags.bits, s.name.c_str(), &slots_[s.slot.index]);
  }
  int32_t operator()(const step::Free &s) {
    void *p = slots_[s.slot.index];
    slots_[s.slot.index] = nullptr;  // released even when hj_free reports an error
    return hj_free(ctx_, p);
  }
  int32_t operator()(const step::Launch &s) {
    int64_t dims[7];
    for (int d = 0; d < 3; ++d) dims[d] = i64(s.grid[d]), dims[3 + d] = i64(s.block[d]);
    dims[6] = i64(s.smem);
    return withParams(s.args, [&](void **params) {
      return hj_launch(ctx_, table_, s.kernel.index, dims, params, s.site.c_str());
    });
  }
  int32_t operator()(const step::Call &s) {
    return withParams(s.args, [&](void **params) {
      return hj_custom_call(ctx_, table_, s.callee.index, params, s.site.c_str());
    });
  }
  int32_t operator()(const step::LoopBegin &s) {
    const PlanLoop &l = plan_.loops[s.loop.index];
    indices_[s.loop.index] = i64(l.lo);
    if (indices_[s.loop.index] >= i64(l.hi)) {
      pc_ = l.end;
      return HJ_OK;
    }
    return evaluateLoopExprs(plan_, s.loop, ctx_, indices_, regs_);
  }
  int32_t operator()(const step::LoopEnd &s) {
    const PlanLoop &l = plan_.loops[s.loop.index];
    if (++indices_[s.loop.index] >= i64(l.hi)) return HJ_OK;  // below hi before, so no overflow
    pc_ = l.begin;
    return evaluateLoopExprs(plan_, s.loop, ctx_, indices_, regs_);
  }
  int32_t operator()(const step::Move &s) {
    Scratch<void *, 8> moved(s.from.size());
    for (size_t k = 0; k < s.from.size(); ++k) moved[k] = slots_[s.from[k].index];
    for (SlotRef from : s.from) slots_[from.index] = nullptr;
    for (size_t k = 0; k < s.to.size(); ++k) slots_[s.to[k].index] = moved[k];
    return HJ_OK;
  }
  int32_t operator()(const step::SetStream &s) { return hj_set_stream(ctx_, s.stream); }
  int32_t operator()(const step::Use &s) { return hj_record_use(ctx_, slots_[s.slot.index]); }
  int32_t operator()(const step::EventRecord &s) { return hj_event_record(ctx_, s.event); }
  int32_t operator()(const step::EventWait &s) { return hj_event_wait(ctx_, s.event); }
  int32_t operator()(const step::StreamSync &) { return hj_stream_sync(ctx_); }
  int32_t operator()(const step::GroupBegin &s) { return group(HJ_COLL_GROUP_BEGIN, s.site); }
  int32_t operator()(const step::GroupEnd &s) { return group(HJ_COLL_GROUP_END, s.site); }
  int32_t operator()(const step::Collective &s) {
    return hj_collective(ctx_, hjCollectiveKind(s.kind), pointer(s.src), static_cast<uint64_t>(i64(s.srcElems)),
                         pointer(s.dst), static_cast<uint64_t>(i64(s.dstElems)), static_cast<uint64_t>(i64(s.count)),
                         static_cast<uint32_t>(s.dtype), s.op, i64(s.peer), s.site.c_str());
  }
  int32_t operator()(const step::Matmul &s) {
    int64_t dims[HJ_MM_DIMS];
    std::array<ExprRef, HJ_MM_DIMS> refs = matmulDims(s);
    for (size_t i = 0; i < HJ_MM_DIMS; ++i) dims[i] = i64(refs[i]);
    return hj_matmul(ctx_, pointer(s.a.memory), pointer(s.b.memory), pointer(s.c.memory), pointer(s.bias),
                     pointer(s.workspace), dims, matmulDtypes(s), matmulFlags(s), s.alpha, s.beta, s.site.c_str());
  }
  int32_t operator()(const std::monostate &) { return HJ_OK; }

 private:
  // Packs args as cuLaunchKernel's kernelParams (one pointer per argument
  // to its value) and hands them to f.
  template <class F>
  int32_t withParams(const Args &args, F &&f) {
    // One 8-byte word per argument, 1 + 2 * rank for a tensor struct: at
    // most 17 each, so a few args fit the stack without counting.
    size_t words = args.size() * (1 + 2 * kMaxRank);
    if (words > 256) {
      words = args.size();
      for (const Arg &arg : args) words += structDims(arg).size();
    }
    Scratch<uint64_t, 256> values(words);
    Scratch<void *, 32> params(args.size());
    size_t word = 0;
    for (size_t a = 0; a < args.size(); ++a) {
      const Arg &arg = args[a];
      uint64_t *slot = &values[word];
      params[a] = slot;
      ++word;
      switch (arg.index()) {
        case 0: {  // InputArg
          const InputArg &in = *std::get_if<InputArg>(&arg);
          void *p = at(inputData(in.input), in.offset);
          std::memcpy(slot, &p, sizeof p);
          word += packDims(in.structDims, slot + 1);
          break;
        }
        case 1: {  // BufferArg
          const BufferArg &b = *std::get_if<BufferArg>(&arg);
          void *p = at(slots_[b.slot.index], b.offset);
          std::memcpy(slot, &p, sizeof p);
          word += packDims(b.structDims, slot + 1);
          break;
        }
        default: {  // ValueArg
          const ValueArg &v = *std::get_if<ValueArg>(&arg);
          *slot = exprArgBits(regs_[v.expr.index], v.param.value);
          break;
        }
      }
    }
    return f(params.data());
  }
  int64_t i64(ExprRef e) const { return regs_[e.index].i; }
  // A tensor struct's sizes and strides after its data pointer; the words written.
  size_t packDims(const ExprRefs &dims, uint64_t *out) const {
    for (size_t d = 0; d < dims.size(); ++d) std::memcpy(&out[d], &regs_[dims[d].index].i, 8);
    return dims.size();
  }
  void *inputData(InputRef in) const {
    const DLTensor *t = inputs_[in.index];
    return static_cast<char *>(t->data) + t->byte_offset;
  }
  // p moved on by a view's offset (none: p).
  void *at(void *p, OffsetRef offset) const {
    return offset.valid() ? static_cast<char *>(p) + regs_[offset.index].i : p;
  }
  void *pointer(const CollectiveBuffer &b) const {
    if (const auto *in = std::get_if<InputMemory>(&b)) return at(inputData(in->input), in->offset);
    if (const auto *m = std::get_if<BufferMemory>(&b)) return at(slots_[m->slot.index], m->offset);
    return nullptr;
  }
  int32_t group(uint32_t kind, const std::string &site) {
    return hj_collective(ctx_, kind, nullptr, 0, nullptr, 0, 0, static_cast<uint32_t>(DType::f32), 0, 0, site.c_str());
  }

  const Plan &plan_;
  hj_context *ctx_;
  const hj_kernel_table *table_;
  const DLTensor *const *inputs_;
  PlanReg *regs_;
  void **slots_;
  int64_t *indices_;
  const Evaluator::StepHook *hook_;  // null: every step runs
  size_t pc_ = 0;
};

}  // namespace

int32_t Evaluator::call(hj_context *ctx, const DLTensor *const *inputs, const hj_value *scalars, void **outData,
                        int64_t *outDims) const {
  const Plan &plan = *plan_;
  Scratch<PlanReg, 128> regs(plan.exprs.size());
  if (int32_t st = evaluateExprs(plan, ctx, inputs, scalars, regs.data())) return st;
  // Buffers in allocation order (slot order); a freed buffer's entry is NULL.
  Scratch<void *, 32> slots(plan.numSlots);
  for (uint32_t i = 0; i < plan.numSlots; ++i) slots[i] = nullptr;
  Scratch<int64_t, 8> indices(plan.loops.size());  // each loop's current index
  Interpreter run(plan, ctx, kernels_->get(), inputs, regs.data(), slots.data(), indices.data(), hook_ ? &hook_ : nullptr);
  if (int32_t st = run.run()) return st;
  for (const PlanOutput &o : plan.outputs) {
    *outData++ = slots[o.slot.index];
    for (ExprRef e : o.sizes) *outDims++ = regs[e.index].i;
    for (ExprRef e : o.strides) *outDims++ = regs[e.index].i;
  }
  return HJ_OK;
}

}  // namespace hostjit
