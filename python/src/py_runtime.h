// py_runtime.h - hostjit.Runtime: a runtime context for Python, with the
// lock that serialises every use of it (calls, frees, inspection) across
// threads, since the GIL is released while a program runs.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "hostjit/exec/runtime_handles.h"
#include "py_common.h"

namespace hostjit::py {

struct RuntimeOptions {
  std::string backend = "auto";  // "auto", "host" or "cuda"
  int32_t device = 0;
  pyb::object stream = pyb::none();
  bool profile = false, record = false, sync = false;
  uint64_t memoryLimit = 0;
  uint32_t graphCache = 0;
  std::vector<std::string> hostKernels, customCalls;
};

class PyRuntime {
 public:
  // Errors: an unknown backend name, a CUDA backend without a driver or
  // device, a library that does not load (each named).
  static std::shared_ptr<PyRuntime> create(const RuntimeOptions &o);

  const std::shared_ptr<Runtime> &runtime() const { return rt_; }
  hj_context *context() const { return rt_->context(); }
  bool cuda() const { return cuda_; }
  // Stream 0's CUstream (NULL on the host).
  void *stream() const { return stream_; }
  // Held for every runtime call made on this context. Never held while
  // waiting for the GIL (taken after releasing it, released before taking it).
  std::mutex &mutex() const { return mutex_; }

  pyb::dict stats() const;
  void resetStats();
  std::vector<std::string> record() const;
  void setRecording(bool on);
  pyb::list profile() const;
  void clearProfile();
  void writeTrace(const std::string &path) const;
  // Graph mode: what the last graph-mode call on this runtime did
  // (hj_graph_outcome), why it ran eagerly (hj_graph_reason), and its
  // signature's memory plan (hj_graph_plan_get; None when there is none).
  std::string graphOutcome() const;
  std::string graphReason() const;
  pyb::object graphPlan() const;
  void synchronize() const;
  void emptyCache();
  void loadHostKernels(const std::string &path);
  void loadCustomCalls(const std::string &path);
  std::string repr() const;

 private:
  std::shared_ptr<Runtime> rt_;
  bool cuda_ = false;
  void *stream_ = nullptr;
  mutable std::mutex mutex_;
};

}  // namespace hostjit::py
