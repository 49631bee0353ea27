// fuzz_text.cpp - libFuzzer target: .hir text -> parse -> verify -> plan ->
// evaluate on the host backend (kernels do nothing, 1 MiB of memory). Any
// input must be reported or run; nothing may crash, leak or hang.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_common.h"
#include "hostjit/exec/evaluator.h"
#include "hostjit/exec/host_data.h"
#include "hostjit/text/text.h"
#include "hostjit/verify/verifier.h"

using namespace hostjit;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 1 << 16) return 0;
  Diagnostics d;
  Program p = parse(std::string(reinterpret_cast<const char *>(data), size), "fuzz.hir", d);
  (void)d.format("fuzz.hir", p.source);
  if (!d.empty()) return 0;
  (void)print(p);
  auto rt = fuzz::runtimeFor(p);
  if (!rt) return 0;
  auto ev = Evaluator::create(p, rt);
  if (!ev || !fuzz::boundedLoops(ev->plan())) return 0;
  auto shapes = fuzz::fixedShapes(ev->plan());
  auto inputs = InputSet::random(rt, ev->plan(), shapes, 1);
  if (!inputs) return 0;
  auto scalars = fuzz::fixedScalars(ev->plan());
  auto out = ev->run(inputs->span(), scalars);
  if (!out && rt->stats().live_bytes != 0) __builtin_trap();  // a failed call must free what it took
  return 0;
}
