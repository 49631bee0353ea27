// comm.h - communicators: the collectives of an SPMD program between ranks,
// on the host backend (ranks are threads of one process, host_comm.cpp) and
// on CUDA (NCCL, loaded at run time, nccl_comm.cpp).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "hostjit/runtime.h"

namespace hj {

// One rank's end of a communicator. Calls come from the thread that uses the
// owning context; abort() may come from any thread.
class Comm {
 public:
  Comm(int32_t rank, int32_t world) : rank_(rank), world_(world) {}
  virtual ~Comm() = default;
  int32_t rank() const { return rank_; }
  int32_t world() const { return world_; }
  // Queues collective `kind` (hj_collective_kind) on `stream` (the backend's
  // native stream; the host runs it now), with hj_collective's arguments.
  // Errors name this rank and `what` (the call and its site).
  virtual int32_t run(uint32_t kind, const void *src, void *dst, uint64_t count, uint32_t dtype, uint32_t op,
                      int32_t peer, void *stream, const std::string &what) = 0;
  // The other ranks' waits fail with `why` from now on.
  virtual void abort(const std::string &why) = 0;
  // On an error path: ends the groups this rank opened (NCCL needs every
  // ncclGroupStart ended), dropping what they queued.
  virtual void closeGroups() = 0;

 private:
  int32_t rank_, world_;
};

// The host backend's communicators: every rank of an id must be a context of
// this process; init waits until all `world` have joined.
int32_t hostCommUniqueId(hj_comm_id *out);
int32_t makeHostComm(const hj_comm_id &id, int32_t world, int32_t rank, std::unique_ptr<Comm> &out);

// NCCL (libnccl.so.2, opened once per process). HJ_ERR_NOT_FOUND saying "no
// NCCL" when it cannot be loaded. The CUDA device's context must be current.
int32_t ncclCommUniqueId(hj_comm_id *out);
int32_t makeNcclComm(const hj_comm_id &id, int32_t world, int32_t rank, std::unique_ptr<Comm> &out);

// Seconds a rank waits for the others (HOSTJIT_COMM_TIMEOUT, default 120).
double commTimeoutSeconds();
const char *collectiveName(uint32_t kind);
const char *reduceOpName(uint32_t op);

}  // namespace hj
