// py_tensor.h - hostjit.Tensor: a program's output in a runtime's memory,
// owned by Python and exported zero-copy through DLPack (__dlpack__,
// __dlpack_device__); its buffer goes back to the runtime's pool when the
// last owner (this object or a consumer of an export) lets go. A plain
// CPython type, not a pybind11 class: every call makes one per output, and
// its creation and type test are on that path.
#pragma once

#include <memory>

#include "dlpack_v1.h"
#include "py_runtime.h"

namespace hostjit::py {

// One output buffer. Its destructor frees it under the runtime's lock: it
// may run on any thread, with or without the GIL (a consumer's deleter),
// and makes no Python call.
struct OwnedBuffer {
  std::shared_ptr<PyRuntime> rt;
  Tensor tensor;
  OwnedBuffer(std::shared_ptr<PyRuntime> r, Tensor t) : rt(std::move(r)), tensor(std::move(t)) {}
  ~OwnedBuffer();
};

// Adds the type to module m as m.Tensor.
void addTensorType(pyb::module_ &m);
// A new hostjit.Tensor owning `t` (a new reference), or nullptr with a
// Python error set.
PyObject *newTensor(std::shared_ptr<PyRuntime> rt, Tensor t);
// `t` as a tensor of the framework whose exchange API is `api` (a new
// reference): exported zero-copy and handed over with
// managed_tensor_to_py_object_no_sync, which steals the export even when
// it fails; no stream synchronisation. nullptr with a Python error set.
PyObject *newFrameworkTensor(const DLPackExchangeAPI *api, std::shared_ptr<PyRuntime> rt, Tensor t);
// The buffer of a hostjit.Tensor, or nullptr when obj is not one.
OwnedBuffer *tensorBuffer(PyObject *obj);

}  // namespace hostjit::py
