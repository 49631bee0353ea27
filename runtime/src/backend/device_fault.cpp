// device_fault.cpp - device faults: the sticky state of a backend, and host kernels' way to report one.
#include <string>

#include "backend/backend.h"
#include "base/error.h"

namespace hj {

namespace {
thread_local std::string pendingHostFault;
}  // namespace

std::atomic<uint64_t> gHostFaultReports{0};

const std::string &Backend::fault() const {
  static const std::string none;
  return faulty() ? fault_ : none;
}

int32_t Backend::faultError() const {
  if (!kernelFault_)
    return fail(HJ_ERR_BACKEND,
                "%s; this context can no longer be used: destroy it, and the programs and kernel tables made on it, "
                "and create a new one with a new communicator on every rank",
                fault_.c_str());
  return fail(HJ_ERR_BACKEND,
              "a kernel failed on the device earlier (%s); this context can no longer be used: destroy it, and the "
              "programs and kernel tables made on it, and create a new one. To find the kernel, run with "
              "HOSTJIT_SYNC=1 (every launch then waits for its kernel, and the one that faults is named with its "
              "statement) or under compute-sanitizer",
              fault_.c_str());
}

void Backend::setFault(const std::string &cause, bool kernel) {
  std::lock_guard<std::mutex> l(faultMutex_);
  if (faulty_.load(std::memory_order_relaxed)) return;
  fault_ = cause;
  kernelFault_ = kernel;
  faulty_.store(true, std::memory_order_release);
}

int32_t Backend::faulted(const std::string &cause) {
  setFault(cause, true);
  return checkFault();
}

void Backend::commFaulted(const std::string &message) { setFault(message, false); }

std::string takeHostFault() {
  std::string f;
  f.swap(pendingHostFault);
  return f;
}

}  // namespace hj

extern "C" void hj_report_host_fault(const char *message) {
  try {
    if (hj::pendingHostFault.empty()) hj::pendingHostFault = message && *message ? message : "a host kernel failed";
    hj::gHostFaultReports.fetch_add(1, std::memory_order_relaxed);
  } catch (...) {
  }
}
