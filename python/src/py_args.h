// py_args.h - a call's Python arguments made into what Executable::run
// takes: tensors imported zero-copy (hostjit.Tensor, the DLPack C exchange
// API, or __dlpack__), scalars converted to their declared types, each
// checked with an error that names the argument.
#pragma once

#include <array>
#include <span>
#include <string>
#include <vector>

#include "dlpack_v1.h"
#include "hostjit/exec/plan.h"
#include "hostjit/exec/scratch.h"
#include "py_runtime.h"

namespace hostjit::py {

// The DLPack C exchange API (version 1.2 or later) of a tensor type, or
// nullptr when it has none; looked up once per type (the GIL held).
const DLPackExchangeAPI *exchangeApi(PyTypeObject *type);

// A program's parameters in declared order, for binding arguments.
struct Param {
  std::string name;  // without '%'
  bool tensor = false;
  uint32_t index = 0;  // among the tensors or the scalars
  DType dtype = DType::f32;
  std::vector<int64_t> dims;  // tensors: kDynamic for '?'
  std::string type;           // "f32[?, 16]" or "f32", for messages
};

// The converted arguments of one call. Borrowed tensors stay valid while it
// lives (it holds what keeps them: references, capsules, managed tensors);
// destroy it with the GIL held. Small calls keep everything on the stack.
class CallArgs {
 public:
  CallArgs(size_t numTensors, size_t numScalars, const PyRuntime &rt, void *execStream);
  ~CallArgs();
  CallArgs(const CallArgs &) = delete;
  CallArgs &operator=(const CallArgs &) = delete;

  // Converts argument `obj` for parameter p (the GIL held).
  void bind(const Param &p, PyObject *obj);
  // Every parameter bound, else an error naming the first missing one.
  void checkComplete(const std::vector<Param> &params);

  std::span<const DLTensor *const> inputs() { return {ptrs_.data(), numTensors_}; }
  std::span<const ScalarArg> scalars() { return {scalars_.data(), numScalars_}; }
  // Streams whose work the call must wait for (producers' current streams),
  // without repeats and without the one the call runs on.
  std::span<void *const> waits() { return {waits_.data(), numWaits_}; }

 private:
  struct Slot {
    DLTensor dl;
    std::array<int64_t, kMaxRank> shape, strides;
    bool bound;
  };
  void copyIn(Slot &s, const DLTensor &t, const Param &p);
  void waitFor(void *stream);

  const PyRuntime &rt_;
  void *exec_;
  size_t numTensors_, numScalars_;
  Scratch<Slot, 8> slots_;
  Scratch<const DLTensor *, 8> ptrs_;
  Scratch<ScalarArg, 8> scalars_;
  Scratch<bool, 8> scalarBound_;
  Scratch<void *, 8> waits_;
  Scratch<PyObject *, 8> keep_;  // one reference (the object or its capsule) per tensor bound
  Scratch<DLManagedTensorVersioned *, 8> managed_;  // from the exchange API, deleted at the end
  size_t numWaits_ = 0, numKeep_ = 0, numManaged_ = 0;
};

}  // namespace hostjit::py
