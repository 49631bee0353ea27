// inject.cpp - counts fallible runtime operations and fails the chosen one.
#include "inject.h"

#include <cstdarg>
#include <cstdio>

#include "error.h"

namespace hj {

int32_t FaultInjector::check(const char *what, ...) {
  ++stats_.fallible_ops;
  if (failAt_ == 0 || ++count_ != failAt_) return HJ_OK;
  failAt_ = 0;  // once
  char buf[512];
  va_list ap;
  va_start(ap, what);
  std::vsnprintf(buf, sizeof buf, what, ap);
  va_end(ap);
  return fail(HJ_ERR_INJECTED, "injected failure of operation %llu: %s", static_cast<unsigned long long>(count_), buf);
}

}  // namespace hj
