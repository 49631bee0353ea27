// py_program.h - hostjit.Program: a program compiled (or prepared for the
// evaluator) on a runtime, called from Python with tensors and scalars.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "hostjit/jit.h"
#include "py_args.h"
#include "py_runtime.h"

namespace hostjit::py {

struct CompileArgs {
  std::shared_ptr<PyRuntime> runtime;
  std::string mode = "jit";  // "jit" or "eval"
  std::string opt = "O2";
  bool graph = false, tiered = true, cache = true;
};

class PyProgram {
 public:
  // A parsed (or lowered) program, verified and prepared.
  static std::unique_ptr<PyProgram> make(Program program, const CompileArgs &a);
  ~PyProgram();

  // prog(*args, stream=None, tensor_type=None, **kwargs): arguments in
  // declared order, or by name; returns None, one output, or a tuple of
  // them (a new reference). Outputs are hostjit.Tensor, or with
  // tensor_type (a type with a DLPack C exchange API, torch.Tensor) that
  // framework's tensors, made without Python calls; they are ordered
  // before `stream` when one is given, else before the framework's
  // current stream. The type's tp_call (module.cpp) calls it directly.
  PyObject *call(PyObject *args, PyObject *kwargs);
  // prog.reserve_graph(*args, **kwargs): plans graph mode for the signature
  // of these arguments (Executable::reserveGraph); nothing runs.
  void reserveGraph(PyObject *args, PyObject *kwargs);
  // The C++ cost of the same call, for the benchmark: `n` calls of
  // Executable::run with these arguments converted once, outputs dropped;
  // nanoseconds per call.
  double timeNative(PyObject *args, uint64_t n);

  const std::string &name() const { return exe_->plan().funcName; }
  pyb::list params() const;
  pyb::list outputs() const;
  const std::string &mode() const { return mode_; }
  bool graph() const { return exe_->graphMode(); }
  void setGraph(bool on) { exe_->setGraphMode(on); }
  // prog.graph_sizes_change: the program's sizes change on most calls
  // (Executable::setGraphSizesChange), on its runtime's context.
  bool graphSizesChange() const { return exe_->graphSizesChange(); }
  void setGraphSizesChange(bool on);
  // jit: whether the native code runs yet; waits for it (its compile error).
  bool native() const;
  void waitNative() const;
  const std::shared_ptr<PyRuntime> &runtime() const { return rt_; }
  std::string text() const { return text_; }
  std::string planText() const;
  std::string repr() const;

  // At interpreter exit: waits for every live program's background compile,
  // so none is running while the process's static objects are destroyed.
  static void waitAllNative();

 private:
  PyProgram() = default;
  void bindArgs(CallArgs &a, PyObject *args, PyObject *kwargs) const;

  std::shared_ptr<PyRuntime> rt_;
  std::shared_ptr<Jit> jit_;  // the process's one Jit, kept while a compiled program lives
  std::unique_ptr<Executable> exe_;
  const CompiledProgram *compiled_ = nullptr;
  std::vector<Param> params_;
  // params_ by name, for keyword arguments: a model's hundreds of them are
  // each found in one look-up, not a scan.
  std::unordered_map<std::string_view, const Param *> byName_;
  std::vector<TensorType> results_;
  size_t numTensors_ = 0, numScalars_ = 0;
  std::string mode_, text_;
};

// The process's Jit, made on first use and destroyed when the last program
// and the module let go of it.
std::shared_ptr<Jit> sharedJit();
void releaseJit();

}  // namespace hostjit::py
