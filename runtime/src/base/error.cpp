// error.cpp - the thread-local last error of the runtime.
#include "base/error.h"

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace hj {
namespace {
thread_local std::string lastError;
thread_local bool lostError = false;
}

int32_t fail(int32_t status, const char *fmt, ...) noexcept {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  int n = std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  try {
    if (n >= static_cast<int>(sizeof buf)) {
      std::string big(static_cast<size_t>(n) + 1, '\0');
      va_start(ap, fmt);
      std::vsnprintf(big.data(), big.size(), fmt, ap);
      va_end(ap);
      big.pop_back();
      lastError = std::move(big);
    } else {
      lastError.assign(buf, n < 0 ? 0 : static_cast<size_t>(n));
    }
    lostError = false;
  } catch (...) {
    lostError = true;  // no memory for the message: hj_last_error says so
  }
  return status;
}

void invariantFailed(const char *file, int line, const char *what) {
  std::fprintf(stderr, "hostjit runtime: internal invariant failed at %s:%d: %s\n", file, line, what);
  std::abort();
}

}  // namespace hj

extern "C" const char *hj_last_error(void) {
  return hj::lostError ? "host memory exhausted while reporting an error" : hj::lastError.c_str();
}
extern "C" void hj_clear_error(void) {
  hj::lastError.clear();
  hj::lostError = false;
}
