// device_fault.cpp - device faults: the sticky state of a backend, and host kernels' way to report one.
#include <string>

#include "backend/backend.h"
#include "base/error.h"

namespace hj {

namespace {
thread_local std::string pendingHostFault;
}  // namespace

std::atomic<uint64_t> gHostFaultReports{0};

int32_t Backend::faultError() const {
  return fail(HJ_ERR_BACKEND,
              "a kernel failed on the device earlier (%s); this context can no longer be used: destroy it, and the "
              "programs and kernel tables made on it, and create a new one. To find the kernel, run with "
              "HOSTJIT_SYNC=1 (every launch then waits for its kernel, and the one that faults is named with its "
              "statement) or under compute-sanitizer",
              fault_.c_str());
}

int32_t Backend::faulted(const std::string &cause) {
  if (fault_.empty()) fault_ = cause;
  return checkFault();
}

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
