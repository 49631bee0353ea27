// fuzz_common.h - what the libFuzzer targets share: a host runtime that
// knows every kernel name a program declares (as a kernel that does
// nothing), with a small memory limit.
#pragma once

#include <memory>

#include "hostjit/exec/runtime.hpp"
#include "hostjit/ir/ir.h"

namespace hostjit::fuzz {

inline void noKernel(const hj_dim3 *, const hj_dim3 *, uint32_t, void **) {}

inline std::shared_ptr<Runtime> runtimeFor(const Program &p) {
  hj_options o;
  hj_options_init(&o);
  o.memory_limit = 1 << 20;
  o.check_zeroed = o.fill_nan = o.reuse_zeroed_memory = o.sync = 0;
  o.fail_at = 0;
  auto rt = Runtime::create(o);
  if (!rt) return nullptr;
  for (const Kernel &k : p.kernels)
    if (k.host) hj_register_host_kernel((*rt)->context(), k.host->c_str(), noKernel);
  return *rt;
}

}  // namespace hostjit::fuzz
