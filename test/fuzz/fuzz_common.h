// fuzz_common.h - what the libFuzzer targets share: a host runtime that
// knows every kernel name a program declares (as a kernel that does
// nothing), with a small memory limit.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "hostjit/exec/runtime_handles.h"
#include "hostjit/exec/plan.h"
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

// Every dynamic dimension of every input 3.
inline std::map<std::string, std::vector<int64_t>> fixedShapes(const Plan &plan) {
  std::map<std::string, std::vector<int64_t>> shapes;
  for (const PlanInput &in : plan.inputs) {
    std::vector<int64_t> dims;
    for (int64_t dim : in.dims) dims.push_back(dim == kDynamic ? 3 : dim);
    shapes[in.name] = dims;
  }
  return shapes;
}

// Every scalar argument 2, in its own type.
inline std::vector<ScalarArg> fixedScalars(const Plan &plan) {
  std::vector<ScalarArg> scalars;
  for (const PlanScalar &s : plan.scalars) {
    ScalarArg a;
    a.type = s.dtype;
    a.value.i64 = 2;
    if (s.dtype == DType::f32) a.value.f32 = 2.0f;
    if (s.dtype == DType::f64) a.value.f64 = 2.0;
    scalars.push_back(a);
  }
  return scalars;
}

// Whether every loop of the plan runs a bounded number of times with the
// inputs above (a program may loop 2^62 times, by design: the fuzzers run
// only those whose bounds are constants, sizes or scalars, nested to at most
// 4096 iterations in all).
inline bool boundedLoops(const Plan &plan) {
  auto value = [&](ExprRef e, int64_t *v) {
    const Expr &x = plan.exprs[e.index];
    switch (x.kind) {
      case Expr::Kind::Const: *v = x.i; return true;
      case Expr::Kind::InputSize: *v = 3; return true;  // fixedShapes
      case Expr::Kind::ScalarInput: *v = 2; return true;  // fixedScalars
      default: return false;
    }
  };
  std::vector<int64_t> total(plan.loops.size(), 0);
  for (size_t l = 0; l < plan.loops.size(); ++l) {
    int64_t lo = 0, hi = 0;
    if (!value(plan.loops[l].lo, &lo) || !value(plan.loops[l].hi, &hi)) return false;
    int64_t trips = hi > lo ? hi - lo : 0;
    if (trips > 4096) return false;
    LoopRef parent = plan.loops[l].parent;  // parents come first
    total[l] = parent.valid() ? total[parent.index] * trips : trips;
    if (total[l] > 4096) return false;
  }
  return true;
}

}  // namespace hostjit::fuzz
