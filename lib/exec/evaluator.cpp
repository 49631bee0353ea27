// evaluator.cpp - interprets a Plan through the runtime's C ABI.
#include "hostjit/exec/evaluator.h"

#include <cstring>

#include "hostjit/ir/scalar_semantics.h"
#include "hostjit/exec/scratch.h"

namespace hostjit {

namespace {

// A scalar register: integers (and bool) in i, f64 in f, f32 in f32 (kept
// as a float so its bits travel unchanged, as in the JIT).
union Reg {
  int64_t i;
  double f;
  float f32;
};

int64_t inputStride(const DLTensor *t, uint32_t dim) {
  if (t->strides) return t->strides[dim];
  int64_t s = 1;
  for (int32_t d = t->ndim - 1; d > static_cast<int32_t>(dim); --d) s *= t->shape[d];
  return s;
}

}  // namespace

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
  Scratch<Reg, 128> regs(plan.exprs.size());
  for (size_t i = 0; i < plan.exprs.size(); ++i) {
    const Expr &e = plan.exprs[i];
    Reg &r = regs[i];
    switch (e.kind) {
      case Expr::Kind::Const:
        if (e.type == DType::f32) r.f32 = static_cast<float>(e.f);
        else if (isFloat(e.type)) r.f = e.f;
        else r.i = e.i;
        break;
      case Expr::Kind::InputSize: r.i = inputs[e.input]->shape[e.dim]; break;
      case Expr::Kind::InputStride: r.i = inputStride(inputs[e.input], e.dim); break;
      case Expr::Kind::ScalarInput: {
        const hj_value &v = scalars[e.input];
        switch (e.type) {
          case DType::i64: r.i = v.i64; break;
          case DType::i32: r.i = v.i32; break;
          case DType::f32: std::memcpy(&r.f32, &v.f32, sizeof(float)); break;
          case DType::f64: r.f = v.f64; break;
          default: r.i = v.b != 0; break;
        }
        break;
      }
      case Expr::Kind::Binary: {
        DType t = plan.exprs[e.a.index].type;
        if (t == DType::f32) {
          evalF32Op(e.op, regs[e.a.index].f32, regs[e.b.index].f32, &r.f32, &r.i);
        } else if (isFloat(t)) {
          evalFloatOp(e.op, t, regs[e.a.index].f, regs[e.b.index].f, &r.f, &r.i);
        } else if (ScalarError err = evalIntOp(e.op, t, regs[e.a.index].i, regs[e.b.index].i, &r.i);
                   err != ScalarError::None) {
          std::string msg = std::string(scalarErrorText(err)) + " computing " + plan.exprNames[i];
          return hj_fail(ctx, HJ_ERR_INVALID_ARGUMENT, msg.c_str());
        }
        break;
      }
    }
  }

  for (const PlanCheck &c : plan.checks)
    if (regs[c.expr].i != c.value) return hj_fail(ctx, HJ_ERR_INVALID_ARGUMENT, c.message.c_str());

  // Buffers in allocation order (slot order); a freed buffer's entry is NULL.
  Scratch<void *, 32> slots(plan.numSlots);
  for (uint32_t i = 0; i < plan.numSlots; ++i) slots[i] = nullptr;
  int32_t status = HJ_OK;
  for (const PlanStep &s : plan.steps) {
    switch (s.kind) {
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
              const Reg &r = regs[arg.index];
              switch (arg.param) {
                case HJ_PARAM_I32: {
                  int32_t v = static_cast<int32_t>(r.i);
                  std::memcpy(slot, &v, 4);
                  break;
                }
                case HJ_PARAM_F32: std::memcpy(slot, &r.f32, 4); break;
                case HJ_PARAM_F64: std::memcpy(slot, &r.f, 8); break;
                case HJ_PARAM_BOOL: {
                  uint8_t v = r.i != 0;
                  std::memcpy(slot, &v, 1);
                  break;
                }
                default: std::memcpy(slot, &r.i, 8); break;
              }
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
