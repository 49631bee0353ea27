// ranks.cpp - `hostjit run --ranks N` (ranks.h).
#include "ranks.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "output.h"

namespace hostjit::cli {

namespace {

std::string toHex(const std::vector<hj_comm_id> &ids) {
  static const char *digits = "0123456789abcdef";
  std::string s;
  for (const hj_comm_id &id : ids)
    for (unsigned char b : id.bytes) {
      s += digits[b >> 4];
      s += digits[b & 15];
    }
  return s;
}

bool fromHex(const std::string &s, std::vector<hj_comm_id> *ids) {
  if (s.size() % 256 != 0) return false;
  ids->assign(s.size() / 256, hj_comm_id{});
  for (size_t i = 0; i < s.size(); i += 2) {
    auto nibble = [](char c) { return c >= 'a' ? c - 'a' + 10 : c - '0'; };
    (*ids)[i / 256].bytes[(i % 256) / 2] = static_cast<unsigned char>(nibble(s[i]) << 4 | nibble(s[i + 1]));
  }
  return true;
}

}  // namespace

bool rankFromEnvironment(int *rank, int *world, std::vector<hj_comm_id> *ids) {
  const char *r = std::getenv("HOSTJIT_RANK"), *w = std::getenv("HOSTJIT_WORLD"), *i = std::getenv("HOSTJIT_COMM_IDS");
  if (!r || !w || !i) return false;
  *rank = std::atoi(r);
  *world = std::atoi(w);
  return fromHex(i, ids) && *world > 0 && *rank >= 0 && *rank < *world;
}

int runRanks(int world, int32_t backend, int idCount, char **argv, const RankFn &fn) {
  std::vector<hj_comm_id> ids(idCount);
  for (hj_comm_id &id : ids)
    if (hj_comm_unique_id(backend, &id) != HJ_OK) {
      std::fprintf(stderr, "hostjit: error: --ranks: %s\n", hj_last_error());
      return 1;
    }
  int worst = 0;
  if (backend == HJ_BACKEND_HOST) {
    std::vector<std::string> out(world);
    std::vector<int> rc(world, 0);
    std::vector<std::thread> threads;
    for (int r = 0; r < world; ++r)
      threads.emplace_back([&, r] {
        tOutput = &out[r];
        rc[r] = fn(r, world, ids);
        tOutput = nullptr;
      });
    for (std::thread &t : threads) t.join();
    for (int r = 0; r < world; ++r) {
      printRank(stdout, r, out[r]);
      worst = std::max(worst, rc[r]);
    }
    return worst;
  }
  // CUDA: one process per rank (device = rank), this program started again.
  std::string hex = toHex(ids);
  std::vector<pid_t> pids;
  for (int r = 0; r < world; ++r) {
    pid_t pid = fork();
    if (pid < 0) {
      std::fprintf(stderr, "hostjit: error: --ranks: cannot start rank %d: %s\n", r, std::strerror(errno));
      for (pid_t p : pids) kill(p, SIGTERM);
      return 1;
    }
    if (pid == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);  // no rank outlives `hostjit run`
      setenv("HOSTJIT_RANK", std::to_string(r).c_str(), 1);
      setenv("HOSTJIT_WORLD", std::to_string(world).c_str(), 1);
      setenv("HOSTJIT_COMM_IDS", hex.c_str(), 1);
      setenv("NCCL_NVLS_ENABLE", "0", 0);  // no NVLink multicast unless asked for
      execv("/proc/self/exe", argv);
      std::fprintf(stderr, "hostjit: error: --ranks: cannot start rank %d: %s\n", r, std::strerror(errno));
      _exit(2);
    }
    pids.push_back(pid);
  }
  // A rank that fails or dies leaves the others waiting in NCCL (or, when
  // it hangs, their watchdogs end them): say which rank was lost, and stop
  // the others (SIGKILL: a rank that hangs may be stopped, and then ignores
  // SIGTERM until it runs again).
  bool stopping = false;
  for (size_t left = pids.size(); left > 0; --left) {
    int status = 0;
    pid_t done = wait(&status);
    if (done < 0) break;
    int rank = -1;
    for (size_t r = 0; r < pids.size(); ++r)
      if (pids[r] == done) rank = static_cast<int>(r), pids[r] = 0;
    int rc = WIFEXITED(status) ? WEXITSTATUS(status) : 2;
    worst = std::max(worst, rc);
    if (stopping || rc == 0) continue;
    if (WIFSIGNALED(status))
      std::fprintf(stderr, "hostjit: error: --ranks: rank %d was lost: killed by signal %d (%s)\n", rank,
                   WTERMSIG(status), strsignal(WTERMSIG(status)));
    else
      std::fprintf(stderr, "hostjit: error: --ranks: rank %d failed (exit status %d)\n", rank, rc);
    std::string others;
    for (size_t r = 0; r < pids.size(); ++r)
      if (pids[r]) {
        kill(pids[r], SIGKILL);
        others += (others.empty() ? "" : ", ") + std::to_string(r);
      }
    if (!others.empty())
      std::fprintf(stderr, "hostjit: error: --ranks: stopped rank%s %s, which had not finished\n",
                   others.find(',') == std::string::npos ? "" : "s", others.c_str());
    stopping = true;
  }
  return worst;
}

}  // namespace hostjit::cli
