// watchdog_rank.cpp - one rank of the watchdog's two-GPU cases
// (scripts/gpu/watchdog_cases.sh starts two of these, one per GPU): it joins
// a communicator whose id rank 0 writes to a file, then calls
// test/gpu/programs/watchdog.hir (an all-reduce) --calls times, checking
// each sum, eagerly or in graph mode. --role says how it misbehaves at the
// middle call: sleep (hangs there), kill (SIGKILLs itself), skip (skips that
// call, then stays alive past the timeout). It prints one line: "rank R: ok"
// or "rank R: failed after S s in call C: MESSAGE", and exits 0 or 1.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>

#include "hostjit/exec/evaluator.h"
#include "hostjit/jit.h"
#include "hostjit/text/text.h"

using namespace hostjit;

namespace {

struct Args {
  int rank = 0, world = 2, calls = 4;
  std::string idFile, mode = "eager", role = "ok";
  double timeout = 5;
  bool jit = false;
};

[[noreturn]] void usage(const char *why) {
  std::fprintf(stderr,
               "watchdog_rank: %s\nusage: watchdog_rank --rank R --world W --id FILE [--mode eager|graph] [--jit] "
               "[--role ok|sleep|kill|skip] [--calls N] [--timeout S]\n",
               why);
  std::exit(2);
}

Args parseArgs(int argc, char **argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    std::string k = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage(("missing the value of " + k).c_str());
      return argv[++i];
    };
    if (k == "--rank") a.rank = std::atoi(value().c_str());
    else if (k == "--world") a.world = std::atoi(value().c_str());
    else if (k == "--id") a.idFile = value();
    else if (k == "--mode") a.mode = value();
    else if (k == "--role") a.role = value();
    else if (k == "--calls") a.calls = std::atoi(value().c_str());
    else if (k == "--timeout") a.timeout = std::atof(value().c_str());
    else if (k == "--jit") a.jit = true;
    else usage(("unknown option " + k).c_str());
  }
  if (a.idFile.empty()) usage("--id is required");
  if (a.mode != "eager" && a.mode != "graph") usage("--mode is eager or graph");
  if (a.role != "ok" && a.role != "sleep" && a.role != "kill" && a.role != "skip") usage("unknown --role");
  if (a.world < 1 || a.rank < 0 || a.rank >= a.world || a.calls < 1 || !(a.timeout > 0)) usage("bad numbers");
  return a;
}

// Rank 0 makes the id and writes it (renamed into place whole); the others
// wait for it.
bool shareId(const Args &a, hj_comm_id *id) {
  if (a.rank == 0) {
    if (hj_comm_unique_id(HJ_BACKEND_CUDA, id) != HJ_OK) return false;
    std::string tmp = a.idFile + ".tmp";
    std::ofstream(tmp, std::ios::binary).write(reinterpret_cast<const char *>(id->bytes), sizeof id->bytes);
    return std::rename(tmp.c_str(), a.idFile.c_str()) == 0;
  }
  for (int i = 0; i < 6000; ++i) {
    std::ifstream f(a.idFile, std::ios::binary);
    if (f.read(reinterpret_cast<char *>(id->bytes), sizeof id->bytes)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

int report(const Args &a, const std::string &what) {
  std::printf("rank %d: %s\n", a.rank, what.c_str());
  std::fflush(stdout);
  return what == "ok" ? 0 : 1;
}

int runRank(const Args &a) {
  hj_comm_id id;
  if (!shareId(a, &id)) return report(a, std::string("failed before joining: no communicator id (") +
                                             hj_last_error() + ")");
  hj_options o;
  hj_options_init(&o);
  o.backend = HJ_BACKEND_CUDA;
  o.device = a.rank;
  o.comm_timeout = a.timeout;
  auto rt = Runtime::create(o);
  if (!rt) return report(a, "failed before joining: " + rt.error().message);
  if (hj_comm_init((*rt)->context(), &id, a.world, a.rank) != HJ_OK)
    return report(a, std::string("failed to join: ") + hj_last_error());
  const char *dir = std::getenv("HOSTJIT_SOURCE_DIR");
  std::string file = std::string(dir && *dir ? dir : HOSTJIT_SOURCE_DIR) + "/test/gpu/programs/watchdog.hir";
  Diagnostics d;
  Program p = parseFile(file, d);
  if (!d.empty()) return report(a, "failed: " + d.format(file, p.source));
  std::unique_ptr<Jit> jit;
  std::unique_ptr<CompiledProgram> cp;
  std::optional<Evaluator> ev;
  if (a.jit) {
    auto j = Jit::create();
    if (!j) return report(a, "failed: " + j.error().message);
    jit = std::move(*j);
    CompileOptions co;
    co.useCache = false;
    co.tiered = false;
    co.graph = a.mode == "graph";
    auto c = jit->compile(p, *rt, co);
    if (!c) return report(a, "failed: " + c.error().message);
    cp = std::move(*c);
  } else {
    auto e = Evaluator::create(p, *rt);
    if (!e) return report(a, "failed: " + e.error().message);
    ev.emplace(std::move(*e));
    ev->setGraphMode(a.mode == "graph");
  }
  const int64_t n = 4096;
  const int middle = a.calls / 2;
  for (int call = 0; call < a.calls; ++call) {
    if (call == middle && a.role == "sleep") {
      report(a, "hangs before call " + std::to_string(call));
      std::this_thread::sleep_for(std::chrono::hours(1));
    }
    if (call == middle && a.role == "kill") {
      report(a, "kills itself before call " + std::to_string(call));
      raise(SIGKILL);
    }
    if (call == middle && a.role == "skip") continue;
    auto start = std::chrono::steady_clock::now();
    ScalarArg scalars[] = {ScalarArg::i64(n), ScalarArg::i64(1000)};
    auto out = cp ? cp->run({}, scalars) : ev->run({}, scalars);
    std::string error = out ? "" : out.error().message;
    std::vector<unsigned char> host;
    if (out) {
      auto h = (*out)[0].toHost();
      if (h) host = std::move(*h);
      else error = h.error().message;
    }
    if (!error.empty()) {
      double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      char head[96];
      std::snprintf(head, sizeof head, "failed after %.2f s in call %d: ", s, call);
      return report(a, head + error);
    }
    const float *v = reinterpret_cast<const float *>(host.data());
    double ranks = a.world * (a.world + 1) / 2.0;
    for (int64_t i = 0; i < n; ++i)
      if (v[i] != float(ranks * double(i + 1)))
        return report(a, "failed: call " + std::to_string(call) + ": element " + std::to_string(i) + " is " +
                             std::to_string(v[i]) + ", expected " + std::to_string(ranks * double(i + 1)));
  }
  if (a.role == "skip") {  // alive, in no collective, until the other rank has given up
    report(a, "skipped call " + std::to_string(middle) + "; waits");
    std::this_thread::sleep_for(std::chrono::duration<double>(a.timeout + 3));
  }
  return report(a, "ok");
}

}  // namespace

int main(int argc, char **argv) { return runRank(parseArgs(argc, argv)); }
