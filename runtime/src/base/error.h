// error.h - the runtime's thread-local last error and the exception firewall.
#pragma once

#include <cstdint>
#include <exception>
#include <new>

#include "hostjit/runtime.h"

namespace hj {

// Sets the calling thread's last error (printf-style) and returns `status`.
// Never throws: without memory for the message, hj_last_error() says so.
int32_t fail(int32_t status, const char *fmt, ...) noexcept __attribute__((format(printf, 2, 3)));

// Aborts the process with file and line: for broken internal invariants only.
[[noreturn]] void invariantFailed(const char *file, int line, const char *what);

// Runs f (which returns a status) so that no exception leaves it: every C
// entry point of the runtime goes through here.
template <class F>
int32_t guarded(F &&f) noexcept {
  try {
    return f();
  } catch (const std::bad_alloc &) {
    return fail(HJ_ERR_OUT_OF_MEMORY, "host memory exhausted inside the runtime");
  } catch (const std::exception &e) {
    return fail(HJ_ERR_INTERNAL, "internal error: %s", e.what());
  } catch (...) {
    return fail(HJ_ERR_INTERNAL, "internal error: unknown exception");
  }
}

}  // namespace hj

#define HJ_INVARIANT(cond) \
  do {                     \
    if (!(cond)) ::hj::invariantFailed(__FILE__, __LINE__, #cond); \
  } while (0)
