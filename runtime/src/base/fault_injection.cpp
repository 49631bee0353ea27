// fault_injection.cpp - counts fallible runtime operations and fails the chosen one.
#include "base/fault_injection.h"

#include <cstdarg>
#include <cstdio>

#include "base/error.h"

namespace hj {

int32_t FaultInjector::fire(const char *what, ...) {
  failAt_ = 0;  // once
  char buf[512];
  va_list ap;
  va_start(ap, what);
  std::vsnprintf(buf, sizeof buf, what, ap);
  va_end(ap);
  return fail(HJ_ERR_INJECTED, "injected failure of operation %llu: %s", static_cast<unsigned long long>(count_), buf);
}

}  // namespace hj
