// comm.h - communicators: the collectives of an SPMD program between ranks,
// on the host backend (ranks are threads of one process, host_comm.cpp) and
// on CUDA (NCCL, loaded at run time, nccl_comm.cpp).
#pragma once

#include <chrono>
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
  // Errors name this rank and `what` (the call and its site). `captured`:
  // the stream is capturing a graph, whose launches are watched instead
  // (watchLaunch); else a watchdog (CUDA) watches the collective complete.
  virtual int32_t run(uint32_t kind, const void *src, void *dst, uint64_t count, uint32_t dtype, uint32_t op,
                      int32_t peer, void *stream, bool captured, const std::string &what) = 0;
  // After a graph holding this communicator's collectives was launched on
  // `stream`: its completion is watched like a collective's (`what` names
  // the graph and its first collective). The host backend's graphs ran
  // their collectives already.
  virtual int32_t watchLaunch(void *stream, const std::string &what) {
    (void)stream, (void)what;
    return HJ_OK;
  }
  // The other ranks' waits fail with `why` from now on.
  virtual void abort(const std::string &why) = 0;
  // On an error path: ends the groups this rank opened (NCCL needs every
  // ncclGroupStart ended), dropping what they queued.
  virtual void closeGroups() = 0;

 private:
  int32_t rank_, world_;
};

// The host backend's communicators: every rank of an id must be a context of
// this process; init waits until all `world` have joined. Every wait of
// the communicator lasts at most `timeout` seconds.
int32_t hostCommUniqueId(hj_comm_id *out);
int32_t makeHostComm(const hj_comm_id &id, int32_t world, int32_t rank, double timeout, std::unique_ptr<Comm> &out);

// What a CUDA communicator's watchdog needs of the device, given by the
// backend that makes it (this room does not call the driver). record comes
// from the thread queuing work; the others may also come from the
// watchdog's thread. Each makes the device current itself.
class CommDevice {
 public:
  virtual ~CommDevice() = default;
  virtual int32_t makeEvent(void **out) = 0;  // an event without timing
  // *recorded false (and HJ_OK): `stream` is being captured into a graph of
  // the caller's, whose work cannot be watched; the event is unused.
  virtual int32_t record(void *event, void *stream, bool *recorded) = 0;
  // 1: the work before the event's last record has completed; 0: not yet;
  // -1: the query failed (a device fault, which the backend reports).
  virtual int query(void *event) = 0;
  virtual void destroyEvent(void *event) = 0;
  // Any thread: the communicator was aborted after `message`; the context
  // fails every later call with it (Backend::commFaulted).
  virtual void fault(const std::string &message) = 0;
};

// NCCL (libnccl.so.2, opened once per process). HJ_ERR_NOT_FOUND saying "no
// NCCL" when it cannot be loaded. The CUDA device's context must be current.
// With a finite `timeout` the communicator is non-blocking: joining, and each
// call's work in NCCL's threads, wait at most `timeout` seconds, and a
// watchdog thread aborts the communicator when queued work has not completed
// within `timeout` (then `device.fault`). Infinity: NCCL's blocking calls.
int32_t ncclCommUniqueId(hj_comm_id *out);
int32_t makeNcclComm(const hj_comm_id &id, int32_t world, int32_t rank, double timeout,
                     std::unique_ptr<CommDevice> device, std::unique_ptr<Comm> &out);

// Seconds a rank waits for the others by default: HOSTJIT_COMM_TIMEOUT, else
// 120; "0" there means no bound (infinity).
double commTimeoutSeconds();
// `seconds` from now; infinity (no bound) is a century from now.
std::chrono::steady_clock::time_point deadlineAfter(double seconds);
// A timeout for messages: "%g".
std::string secondsText(double seconds);
const char *collectiveName(uint32_t kind);
const char *reduceOpName(uint32_t op);

}  // namespace hj
