// scratch.h - small per-call arrays on the stack, on the heap only when large.
#pragma once

#include <cstddef>
#include <memory>

namespace hostjit {

// n elements of T (trivial types): on the stack when n <= N, else on the heap.
template <class T, size_t N>
class Scratch {
 public:
  explicit Scratch(size_t n) : p_(n <= N ? small_ : (heap_ = std::make_unique<T[]>(n)).get()) {}
  Scratch(const Scratch &) = delete;
  Scratch &operator=(const Scratch &) = delete;
  T &operator[](size_t i) { return p_[i]; }
  T *data() { return p_; }

 private:
  T small_[N];
  std::unique_ptr<T[]> heap_;
  T *p_;
};

}  // namespace hostjit
