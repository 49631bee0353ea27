// graph_mode.h - graph mode for the evaluator and the JIT alike: the key of
// a call's signature, and the call protocol of hj_graph_call around a
// program's raw entry (docs/graph-mode.md).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include <dlpack/dlpack.h>

#include "hostjit/exec/plan.h"
#include "hostjit/exec/runtime_handles.h"
#include "hostjit/runtime.h"

namespace hostjit {

// What graph mode needs to know about a program; computed once per plan.
// Destroying it drops the program's graphs from the runtime it was made for
// (other contexts' copies go when their caches evict them).
struct GraphSignature {
  uint64_t programId = 0;            // unique in this process: keys of two programs never match
  std::vector<uint32_t> keyScalars;  // scalar inputs any extent, launch dim, output dim or check depends on
  // A kernel argument computed from a scalar outside the key: the param-th
  // argument of the launch-th launch, the plan expression it takes.
  struct DynamicArg {
    uint32_t launch = 0, param = 0, expr = 0;
    int32_t kind = 0;  // hj_param_kind
  };
  std::vector<DynamicArg> dynamicArgs;
  // A replay may skip the program: every argument is an address, fixed by
  // the key, or a dynamic argument (computed per call from the expressions).
  bool fast = true;
  bool evaluate = false;             // a scalar input is outside the key: evaluate the expressions per call
  // Inputs the program passes at an offset (a view's): the runtime takes an
  // address inside an input as the nearest input at or below it, which is
  // right unless another input starts inside such an input (slicesOverlap).
  std::vector<uint32_t> slicedInputs;
  std::shared_ptr<Runtime> runtime;
  static std::shared_ptr<const GraphSignature> of(const Plan &plan, std::shared_ptr<Runtime> rt);
  GraphSignature() = default;
  GraphSignature(const GraphSignature &) = delete;
  GraphSignature &operator=(const GraphSignature &) = delete;
  ~GraphSignature();
};

// Tensor inputs a caller binds once for graph-mode calls, as PyTorch's
// CUDA graphs treat a module's parameters (a model's weights): their
// DLTensors are read when bound, not on every call, so a replay's cost does
// not grow with them. The caller promises that, for every call given this
// binding, each bound input is the DLTensor it was bound with: the same
// data address, dtype, sizes and strides. A bound buffer that is freed,
// moved or reshaped needs a new binding (bind again, or call without one);
// a call that breaks the promise runs its graph on the bound addresses and
// shapes. Made by bindStatic; used by Executable::callGraph.
struct StaticInputs {
  uint64_t id = 0;                // unique in this process: keys of two bindings never match
  uint64_t programId = 0;         // the GraphSignature it was made for
  std::vector<char> bound;        // per input of the plan
  std::vector<uint32_t> others;   // the inputs not bound, in order
  std::vector<void *> data;       // per input: a bound one's data address
};

// Binds inputs[i] for every i in `which` (indices of tensor inputs of the
// plan); the other entries of `inputs` are not read. Fails naming the
// index when one is out of range.
Expected<StaticInputs> bindStatic(const Plan &plan, const GraphSignature &sig, const DLTensor *const *inputs,
                                  std::span<const uint32_t> which);

// The first half of a call in graph mode: makes the signature key (the
// program, every input's rank, dtype, sizes and strides and which inputs
// share an address, and the key scalars; with `bound`, the binding for
// the inputs it holds) and calls hj_graph_call (with `reserve`,
// hj_graph_reserve). *done is set when the call needs no run of the
// program (a replay, or a reservation of a signature planned already).
// `checked`: the caller checked the arguments (checkArguments), so this
// thread remembers the inputs and their key words for sameCheckedInputs.
int32_t graphCallBegin(hj_context *ctx, const Plan &plan, const GraphSignature &sig, const DLTensor *const *inputs,
                       const hj_value *scalars, void **outData, int64_t *outDims, int32_t *done,
                       const StaticInputs *bound = nullptr, bool reserve = false, bool checked = false);

// Whether inputs[0..n) are, field for field (data address, offset, dtype,
// device, sizes and strides), the inputs of this thread's last checked
// graph-mode call of this program: a caller that calls in a loop with
// DLTensors it prepared once. Their checks then passed already, and the
// next graphCallBegin on this thread with `checked` reuses that call's key
// words instead of reading every input again.
bool sameCheckedInputs(const GraphSignature &sig, const DLTensor *const *inputs, size_t n);

// Whether another input starts inside the memory of an input the program
// passes at an offset (GraphSignature::slicedInputs): graph mode could not
// tell which of the two such an address is in, so the call runs eagerly.
bool slicesOverlap(const GraphSignature &sig, const DLTensor *const *inputs, size_t n);

// A call of `run` (a program's raw entry, returning an hj_status) in graph
// mode: the contract of the raw entry (jit.h), with the program's launches
// and memsets replayed from a graph per signature. With `reserve`, the
// signature's memory plan is made (hj_graph_reserve): the program is only
// traced, and the outputs are NULL.
template <class Run>
int32_t callInGraphMode(hj_context *ctx, const Plan &plan, const GraphSignature &sig, const DLTensor *const *inputs,
                        const hj_value *scalars, void **outData, int64_t *outDims, Run &&run,
                        const StaticInputs *bound = nullptr, bool reserve = false, bool checked = false) {
  if (!reserve && slicesOverlap(sig, inputs, plan.inputs.size())) return run();  // eagerly: see slicedInputs
  int32_t done = 0;
  if (int32_t st = graphCallBegin(ctx, plan, sig, inputs, scalars, outData, outDims, &done, bound, reserve, checked))
    return st;
  if (done) return HJ_OK;
  for (;;) {
    int32_t again = 0, st = HJ_OK;
    try {
      st = run();
    } catch (...) {
      // Leave the context out of graph mode before the exception goes on.
      for (again = 1; again;) hj_graph_end(ctx, HJ_ERR_INTERNAL, outData, outDims, &again);
      throw;
    }
    st = hj_graph_end(ctx, st, outData, outDims, &again);
    if (!again) return st;
  }
}

}  // namespace hostjit
