// evaluator.h - runs a prepared Host IR program by interpretation, making
// the same runtime calls, in the same order, as the JIT-compiled function.
#pragma once

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

  // The raw entry, by interpretation (Executable::call).
  int32_t call(hj_context *ctx, const DLTensor *const *inputs, const hj_value *scalars, void **outData,
               int64_t *outDims) const override;

 private:
  using Executable::Executable;
};

}  // namespace hostjit
