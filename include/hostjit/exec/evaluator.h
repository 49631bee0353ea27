// evaluator.h - runs a prepared Host IR program by interpretation, making
// the same runtime calls, in the same order, as the JIT-compiled function.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

#include "hostjit/exec/executable.h"

namespace hostjit {

class Evaluator final : public Executable {
 public:
  // Verifies and prepares `p`, and loads its kernels on `rt` (once).
  static Expected<Evaluator> create(const Program &p, std::shared_ptr<Runtime> rt);
  // An evaluator of a prepared plan whose kernels are already loaded.
  static Evaluator fromPlan(std::shared_ptr<const Plan> plan, std::shared_ptr<Runtime> rt,
                            std::shared_ptr<KernelTable> kernels);

  // Lets a caller make some of the plan's steps itself. Called before each
  // step with the step's index in plan.steps and the call's buffer slots
  // (slot order; a freed or skipped buffer's entry is NULL); it returns
  // kRunStep to have the step run as usual, or the status of having made
  // the step (HJ_OK: made or skipped). A status other than HJ_OK fails the
  // call as the step's own failure would: what is live is freed.
  static constexpr int32_t kRunStep = -1;
  using StepHook = std::function<int32_t(size_t step, void *const *slots)>;
  static Evaluator fromPlan(std::shared_ptr<const Plan> plan, std::shared_ptr<Runtime> rt,
                            std::shared_ptr<KernelTable> kernels, StepHook hook);

  // The raw entry, by interpretation (Executable::call).
  int32_t call(hj_context *ctx, const DLTensor *const *inputs, const hj_value *scalars, void **outData,
               int64_t *outDims) const override;

 private:
  using Executable::Executable;
  StepHook hook_;
};

}  // namespace hostjit
