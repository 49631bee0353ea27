// output.h - where `hostjit run` writes: standard output and error, or, for
// one rank of `--ranks N`, a buffer that is printed when the rank is done,
// each line after "rank R: " (so the ranks' outputs do not interleave).
#pragma once

#include <cstdarg>
#include <cstdio>
#include <string>

namespace hostjit::cli {

// The calling thread's buffer, or NULL for the terminal.
inline thread_local std::string *tOutput = nullptr;

inline void vwrite(FILE *f, const char *fmt, va_list ap) {
  if (!tOutput) {
    std::vfprintf(f, fmt, ap);
    return;
  }
  va_list copy;
  va_copy(copy, ap);
  int n = std::vsnprintf(nullptr, 0, fmt, copy);
  va_end(copy);
  if (n <= 0) return;
  std::string s(static_cast<size_t>(n) + 1, '\0');
  std::vsnprintf(s.data(), s.size(), fmt, ap);
  s.pop_back();
  *tOutput += s;
}

// printf to standard output (or the rank's buffer).
inline void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
inline void say(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vwrite(stdout, fmt, ap);
  va_end(ap);
}

// printf to standard error (or the rank's buffer).
inline void complain(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
inline void complain(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vwrite(stderr, fmt, ap);
  va_end(ap);
}

// Prints a rank's buffer, each line prefixed, to `f`.
inline void printRank(FILE *f, int rank, const std::string &text) {
  size_t at = 0;
  while (at < text.size()) {
    size_t nl = text.find('\n', at);
    std::string line = text.substr(at, nl == std::string::npos ? std::string::npos : nl - at);
    std::fprintf(f, "rank %d: %s\n", rank, line.c_str());
    if (nl == std::string::npos) break;
    at = nl + 1;
  }
  std::fflush(f);
}

}  // namespace hostjit::cli
