// host_params.h - reads a host kernel's parameters out of the void** array the runtime passes.
#pragma once

#include <cstring>

namespace hostjit_examples {

// The i-th parameter as a T, copied out (parameters need not be aligned for T).
template <class T>
T arg(void **params, int i) {
  T v;
  std::memcpy(&v, params[i], sizeof v);
  return v;
}

}  // namespace hostjit_examples
