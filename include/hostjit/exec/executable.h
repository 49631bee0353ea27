// executable.h - a prepared program bound to a runtime: what the evaluator
// and a compiled program share (the plan, the runtime, the loaded kernels,
// the graph-mode signature), and the one run() both use.
#pragma once

#include <memory>
#include <span>
#include <vector>

#include "hostjit/exec/graph_mode.h"
#include "hostjit/exec/plan.h"
#include "hostjit/exec/runtime_handles.h"

namespace hostjit {

class Executable {
 public:
  virtual ~Executable() = default;

  // Checks the arguments, runs the program (in graph mode when it is on)
  // and returns its outputs. On failure every buffer allocated by this call
  // has been freed (in reverse order of allocation) and the runtime is as
  // before the call. With `bound` (bindStatic, of this program), the inputs
  // it holds are neither checked again nor, in graph mode, read for the
  // key: the caller promises they are the DLTensors they were bound as.
  Expected<std::vector<Tensor>> run(std::span<const DLTensor *const> inputs, std::span<const ScalarArg> scalars = {},
                                    const StaticInputs *bound = nullptr);

  // The raw entry (its contract is in jit.h): no argument checks; writes
  // each output's data pointer to outData and its sizes (then explicit
  // strides) to outDims; returns an hj_status. On any context of the
  // runtime's backend.
  virtual int32_t call(hj_context *ctx, const DLTensor *const *inputs, const hj_value *scalars, void **outData,
                       int64_t *outDims) const = 0;
  // The raw entry in graph mode (docs/graph-mode.md): a graph per input
  // signature replayed instead of the launches one by one.
  // With `bound` (bindStatic), the inputs it holds are not read for the
  // key: the caller promises they are what they were bound as.
  int32_t callGraph(hj_context *ctx, const DLTensor *const *inputs, const hj_value *scalars, void **outData,
                    int64_t *outDims, const StaticInputs *bound = nullptr) const {
    return callInGraphMode(ctx, *plan_, *sig_, inputs, scalars, outData, outDims,
                           [&] { return call(ctx, inputs, scalars, outData, outDims); }, bound);
  }
  // Plans graph mode for the signature of these arguments without running
  // anything on the device (hj_graph_reserve, docs/graph-mode.md#upper-bounds):
  // given the largest shapes a loop will reach, its calls of the same shape
  // of work fit the memory plan, which then neither grows nor moves. The
  // inputs' data is not read. Returns an hj_status.
  int32_t reserveGraph(hj_context *ctx, const DLTensor *const *inputs, const hj_value *scalars) const;
  // run()'s argument checks, then reserveGraph on the runtime's context.
  Expected<void> reserveGraph(std::span<const DLTensor *const> inputs, std::span<const ScalarArg> scalars = {});
  // Binds inputs[i] for i in `which` for callGraph and run (graph_mode.h
  // says what the caller then promises), after run()'s checks of each of
  // them; errors name the argument.
  Expected<StaticInputs> bindStatic(const DLTensor *const *inputs, std::span<const uint32_t> which) const;

  // Graph mode for run().
  void setGraphMode(bool on) { graph_ = on; }
  bool graphMode() const { return graph_; }
  // Says that this program is called with sizes that change on most calls
  // (a decode loop's), or no longer: in graph mode under
  // HOSTJIT_GRAPH_DEVICE_UPDATES=auto its graphs built on the runtime's
  // context take node updates at launch from their first build
  // (hj_graph_sizes_change; docs/graph-mode.md, Updates at launch).
  Expected<void> setGraphSizesChange(bool on);
  bool graphSizesChange() const { return sizesChange_; }

  const Plan &plan() const { return *plan_; }
  const std::shared_ptr<Runtime> &runtime() const { return rt_; }
  const hj_kernel_table *kernels() const { return kernels_->get(); }

 protected:
  Executable() = default;
  Executable(std::shared_ptr<const Plan> plan, std::shared_ptr<Runtime> rt, std::shared_ptr<KernelTable> kernels);

  // Declared first, so destroyed last: what the rest must not outlive (a
  // compiled program's code).
  std::shared_ptr<void> keepAlive_;
  std::shared_ptr<const Plan> plan_;
  std::shared_ptr<Runtime> rt_;
  std::shared_ptr<KernelTable> kernels_;
  std::shared_ptr<const GraphSignature> sig_;
  bool graph_ = false;
  bool sizesChange_ = false;  // setGraphSizesChange's, on rt_'s context
};

// Converts typed scalar arguments to the entry's hj_value slots.
void packScalars(std::span<const ScalarArg> scalars, hj_value *out);

}  // namespace hostjit
