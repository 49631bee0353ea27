// evaluator.h - runs a prepared Host IR program by interpretation, making
// the same runtime calls, in the same order, as the JIT-compiled function.
#pragma once

#include <memory>
#include <span>
#include <vector>

#include "hostjit/exec/graph_mode.h"
#include "hostjit/exec/plan.h"
#include "hostjit/exec/runtime.hpp"

namespace hostjit {

class Evaluator {
 public:
  // Verifies and prepares `p`, and loads its kernels on `rt` (once).
  static Expected<Evaluator> create(const Program &p, std::shared_ptr<Runtime> rt);
  // An evaluator of a prepared plan whose kernels are already loaded.
  static Evaluator fromPlan(std::shared_ptr<const Plan> plan, std::shared_ptr<Runtime> rt,
                            std::shared_ptr<KernelTable> kernels);

  // Checks the arguments, runs the program and returns its outputs. On
  // failure every buffer allocated by this call has been freed (in reverse
  // order of allocation) and the runtime is as before the call.
  Expected<std::vector<Tensor>> run(std::span<const DLTensor *const> inputs, std::span<const ScalarArg> scalars = {});

  // The raw call, with the JIT entry's contract (see jit.h): no argument
  // checks; writes each output's data pointer to outData and its sizes (then
  // explicit strides) to outDims; returns an hj_status.
  int32_t call(hj_context *ctx, const DLTensor *const *inputs, const hj_value *scalars, void **outData,
               int64_t *outDims) const;

  // Graph mode (docs/graph-mode.md): run() replays a graph per input
  // signature instead of making the launches one by one.
  void setGraphMode(bool on) { graph_ = on; }
  bool graphMode() const { return graph_; }
  // The raw call in graph mode, on any context of the runtime's backend.
  int32_t callGraph(hj_context *ctx, const DLTensor *const *inputs, const hj_value *scalars, void **outData,
                    int64_t *outDims) const {
    return callInGraphMode(ctx, *plan_, *sig_, inputs, scalars, outData, outDims,
                           [&] { return call(ctx, inputs, scalars, outData, outDims); });
  }

  const Plan &plan() const { return *plan_; }
  const std::shared_ptr<Runtime> &runtime() const { return rt_; }

 private:
  std::shared_ptr<const Plan> plan_;
  std::shared_ptr<Runtime> rt_;
  std::shared_ptr<KernelTable> kernels_;
  std::shared_ptr<const GraphSignature> sig_;
  bool graph_ = false;
};

// Converts typed scalar arguments to the entry's hj_value slots.
void packScalars(std::span<const ScalarArg> scalars, hj_value *out);

}  // namespace hostjit
