// py_common.h - what the Python module's files share: pybind11, the
// HostjitError raised for every hostjit error, and stream handles.
#pragma once

#include <cstdint>
#include <string>

#include <pybind11/pybind11.h>

#include "hostjit/ir/error.h"

namespace hostjit::py {

namespace pyb = pybind11;

// Thrown inside the module, translated to hostjit.HostjitError(message)
// with .status (an int, hostjit.Status) by the translator module.cpp
// registers.
struct HostjitErrorCpp {
  int32_t status;
  std::string message;
};

// Sets the Python error for e (the GIL held); for code outside pybind11's
// translation (the CPython types' functions).
void setHostjitError(const HostjitErrorCpp &e);

// Runs f (returning a new reference), turning a C++ exception into the
// Python error it stands for and nullptr: the CPython functions' firewall.
template <class F>
PyObject *guardedPy(F &&f) {
  try {
    return f();
  } catch (pyb::error_already_set &e) {
    e.restore();
  } catch (const HostjitErrorCpp &e) {
    setHostjitError(e);
  } catch (const std::exception &e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
  }
  return nullptr;
}

[[noreturn]] inline void raise(const Error &e) { throw HostjitErrorCpp{e.status, e.message}; }
[[noreturn]] inline void raise(int32_t status, std::string message) {
  throw HostjitErrorCpp{status, std::move(message)};
}
// The calling thread's last runtime error for a failed status.
[[noreturn]] void raiseRuntime(int32_t status, const char *what);

// Releases the GIL for its scope: PyEval_SaveThread and RestoreThread, what
// pybind11's gil_scoped_release does with more bookkeeping, for the call path.
class NoGil {
 public:
  NoGil() : state_(PyEval_SaveThread()) {}
  ~NoGil() { PyEval_RestoreThread(state_); }
  NoGil(const NoGil &) = delete;
  NoGil &operator=(const NoGil &) = delete;

 private:
  PyThreadState *state_;
};

// A CUDA stream given by Python: None (the default), an int handle, an
// object with .cuda_stream (PyTorch) or .ptr (CuPy), or one with
// __cuda_stream__() (the CUDA Python protocol: (version, handle)). `what`
// names the argument in errors. *given is false for None.
void *streamHandle(pyb::handle obj, const char *what, bool *given);
// Whether two CUstreams are the same: NULL and CU_STREAM_LEGACY (1) both
// name the legacy default stream.
inline bool sameStream(void *a, void *b) {
  auto norm = [](void *s) { return s == reinterpret_cast<void *>(uintptr_t{1}) ? nullptr : s; };
  return norm(a) == norm(b);
}

}  // namespace hostjit::py
