// demo.cpp - runs one example end to end through the evaluator and the JIT:
// checks the result against the reference, times calls, prints the stats.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>

#include "hostjit/exec/evaluator.h"
#include "hostjit/jit.h"
#include "hostjit/exec/parity.h"
#include "hostjit/text/text.h"
#include "reference.h"

using namespace hostjit;

namespace {

template <class Fn>
double medianMicros(int n, Fn &&fn) {
  std::vector<double> t(n);
  for (int i = 0; i < n; ++i) {
    auto a = std::chrono::steady_clock::now();
    fn();
    auto b = std::chrono::steady_clock::now();
    t[i] = std::chrono::duration<double, std::micro>(b - a).count();
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

void printStats(const char *mode, const hj_stats &s) {
  std::printf("  %-4s allocs=%llu frees=%llu memsets=%llu launches=%llu backend_allocs=%llu pool_hits=%llu "
              "arena_growths=%llu live_bytes=%llu peak_bytes=%llu reserved_bytes=%llu arena_bytes=%llu\n",
              mode, (unsigned long long)s.allocs, (unsigned long long)s.frees, (unsigned long long)s.memsets,
              (unsigned long long)s.launches, (unsigned long long)s.backend_allocs, (unsigned long long)s.pool_hits,
              (unsigned long long)s.arena_growths, (unsigned long long)s.live_bytes, (unsigned long long)s.peak_bytes,
              (unsigned long long)s.reserved_bytes, (unsigned long long)s.arena_bytes);
}

int fail(const std::string &what) {
  std::fprintf(stderr, "hostjit-demo: error: %s\n", what.c_str());
  return 1;
}

// The example's file as the reader finds it: under the repository's
// examples/ folder, or where --examples pointed.
std::string shownPath(const std::string &file, bool defaultDir) {
  if (!defaultDir) return file;
  return (std::filesystem::path("examples") / std::filesystem::path(file).filename()).string();
}

}  // namespace

int main(int argc, char **argv) {
  std::string name = "grid_sum", dir = HOSTJIT_EXAMPLES_DIR, kernelLib = HOSTJIT_EXAMPLE_KERNELS;
  int32_t backend = HJ_BACKEND_AUTO;
  int repeat = 1000;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--backend" && i + 1 < argc) {
      std::string v = argv[++i];
      backend = v == "host" ? HJ_BACKEND_HOST : v == "cuda" ? HJ_BACKEND_CUDA : v == "auto" ? HJ_BACKEND_AUTO : -1;
      if (backend < 0) return fail("--backend expects host, cuda or auto");
    } else if (a == "--repeat" && i + 1 < argc) {
      repeat = std::max(1, std::atoi(argv[++i]));
    } else if (a == "--examples" && i + 1 < argc) {
      dir = argv[++i];
    } else if (a == "--host-kernels" && i + 1 < argc) {
      kernelLib = argv[++i];
    } else if (a == "grid_sum" || a == "splitk" || a == "pipeline") {
      name = a;
    } else {
      return fail("usage: hostjit-demo [grid_sum|splitk|pipeline] [--backend host|cuda|auto] [--repeat N] [--examples DIR] [--host-kernels LIB.so]");
    }
  }
  auto cases = examples::exampleCases(dir, name);
  const examples::ExampleCase &c = cases.back();
  Diagnostics d;
  Program p = parseFile(c.file, d);
  if (!d.empty()) return fail(d.format(c.file, p.source));

  hj_options o;
  hj_options_init(&o);
  o.backend = backend;
  auto rtEval = Runtime::create(o), rtJit = Runtime::create(o);
  if (!rtEval) return fail(rtEval.error().message);
  if (!rtJit) return fail(rtJit.error().message);
  bool cuda = hj_context_backend((*rtEval)->context()) == HJ_BACKEND_CUDA;
  // On the host backend the kernels are host functions from the examples'
  // host-kernel library, loaded as a user's own would be.
  if (!cuda)
    for (auto *rt : {&*rtEval, &*rtJit})
      if (hj_load_host_library((*rt)->context(), kernelLib.c_str()) != HJ_OK) return fail(hj_last_error());
  std::printf("hostjit demo: example %s (%s), backend %s\n", name.c_str(), shownPath(c.file, dir == HOSTJIT_EXAMPLES_DIR).c_str(),
              cuda ? "cuda" : "host");

  auto jit = Jit::create();
  if (!jit) return fail(jit.error().message);
  auto ev = Evaluator::create(p, *rtEval);
  if (!ev) return fail(ev.error().message);
  auto t0 = std::chrono::steady_clock::now();
  auto cp = (*jit)->compile(p, *rtJit);
  auto t1 = std::chrono::steady_clock::now();
  if (!cp) return fail(cp.error().message);
  std::printf("jit: ready in %.3f ms (%s)\n", std::chrono::duration<double, std::milli>(t1 - t0).count(),
              (*cp)->fromCache() ? "object cache"
              : (*cp)->tiered()  ? "the evaluator serves calls until the native code is compiled"
                                 : "codegen");
  if (auto ok = (*cp)->waitNative(); !ok) return fail(ok.error().message);
  std::printf("jit: native code ready %.3f ms after compile() began\n", (*cp)->nativeReadyMs());

  auto inputs = InputSet::random(*rtEval, ev->plan(), c.shapes, 42);
  if (!inputs) return fail(inputs.error().message);
  std::string shape;
  for (auto &[in, dims] : c.shapes) {
    shape += (shape.empty() ? "" : ", ") + in + "[";
    for (size_t k = 0; k < dims.size(); ++k) shape += (k ? "," : "") + std::to_string(dims[k]);
    shape += "]";
  }
  std::printf("inputs: %s (random non-zero, seed 42)\n", shape.c_str());

  auto outEval = ev->run(inputs->span(), c.scalars);
  if (!outEval) return fail("eval: " + outEval.error().message);
  auto outJit = (*cp)->run(inputs->span(), c.scalars);
  if (!outJit) return fail("jit: " + outJit.error().message);
  std::string checkEval = examples::checkExample(c, *inputs, *outEval);
  std::string checkJit = examples::checkExample(c, *inputs, *outJit);
  auto same = compareOutputs(*outEval, *outJit);
  std::printf("result check against the reference: eval %s, jit %s; eval and jit outputs %s\n",
              checkEval.empty() ? "ok" : ("FAILED: " + checkEval).c_str(),
              checkJit.empty() ? "ok" : ("FAILED: " + checkJit).c_str(),
              same ? ("differ: " + *same).c_str() : "bit-identical");
  outEval->clear();
  outJit->clear();

  hj_reset_stats((*rtEval)->context());
  hj_reset_stats((*rtJit)->context());
  double evalUs = medianMicros(repeat, [&] { auto r = ev->run(inputs->span(), c.scalars); });
  double jitUs = medianMicros(repeat, [&] { auto r = (*cp)->run(inputs->span(), c.scalars); });
  hj_synchronize((*rtEval)->context());
  hj_synchronize((*rtJit)->context());
  std::printf("time per call (median of %d, host side%s): eval %.2f us, jit %.2f us\n", repeat,
              cuda ? ", kernels run asynchronously" : ", includes the host kernels", evalUs, jitUs);
  std::printf("stats over those %d calls:\n", repeat);
  printStats("eval", (*rtEval)->stats());
  printStats("jit", (*rtJit)->stats());
  bool ok = checkEval.empty() && checkJit.empty() && !same;
  return ok ? 0 : 1;
}
