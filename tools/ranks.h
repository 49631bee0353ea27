// ranks.h - `hostjit run --ranks N`: one rank per thread on the host backend
// (its communicator joins threads of one process), one process per GPU on
// CUDA (the process starts itself again N times, handing each its rank and
// the communicator ids through the environment).
#pragma once

#include <functional>
#include <vector>

#include "hostjit/runtime.h"

namespace hostjit::cli {

// One rank's run: its rank, the number of ranks, and `idCount` communicator
// ids (the same on every rank). Returns an exit status.
using RankFn = std::function<int(int rank, int world, const std::vector<hj_comm_id> &ids)>;

// Runs `fn` on `world` ranks of `backend` (HJ_BACKEND_HOST or _CUDA); argv
// is this process's command line (CUDA starts it again). Returns the worst
// exit status; each rank's output is printed after it, line by line, after
// "rank R: ".
int runRanks(int world, int32_t backend, int idCount, char **argv, const RankFn &fn);

// In a process that runRanks started: true, with its rank, world and ids.
bool rankFromEnvironment(int *rank, int *world, std::vector<hj_comm_id> *ids);

}  // namespace hostjit::cli
