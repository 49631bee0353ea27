// error.h - hostjit's C++ error type and Expected<T> for fallible calls.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <variant>

namespace hostjit {

// A failure reported to the caller: an hj_status and a message that names
// what was wrong (the argument, the buffer, the file:line:col).
struct Error {
  int32_t status = 1;
  std::string message;
};

// Thrown only by programming mistakes against the C++ API (a builder given
// an id from another program); user input never throws, it returns Error.
class ApiMisuse : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

template <class T>
class [[nodiscard]] Expected {
 public:
  Expected(T value) : v_(std::move(value)) {}
  Expected(Error e) : v_(std::move(e)) {}
  explicit operator bool() const { return v_.index() == 0; }
  T &operator*() & { return std::get<0>(v_); }
  T &&operator*() && { return std::get<0>(std::move(v_)); }
  T *operator->() { return &std::get<0>(v_); }
  const T *operator->() const { return &std::get<0>(v_); }
  const Error &error() const { return std::get<1>(v_); }

 private:
  std::variant<T, Error> v_;
};

// A call that returns nothing but may fail: converts to true on success.
template <>
class [[nodiscard]] Expected<void> {
 public:
  Expected() = default;
  Expected(Error e) : e_(std::move(e)) {}
  explicit operator bool() const { return !e_; }
  const Error &error() const { return *e_; }

 private:
  std::optional<Error> e_;
};

// Aborts with file and line: broken internal invariants only.
[[noreturn]] void invariantFailed(const char *file, int line, const char *what);

}  // namespace hostjit

#define HOSTJIT_INVARIANT(cond) \
  do {                          \
    if (!(cond)) ::hostjit::invariantFailed(__FILE__, __LINE__, #cond); \
  } while (0)
