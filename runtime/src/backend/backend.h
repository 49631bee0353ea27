// backend.h - the interface every runtime backend implements (host, CUDA).
//
// The pool, the zeroed arena, recording and stats sit above this interface
// and never look at which backend is below. All calls are made from the one
// thread that uses the owning context. Each int32_t result is an hj_status
// with the last error set on failure.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "backend/graph_node.h"
#include "hostjit/fields.h"
#include "base/call_path.h"
#include "base/dtypes.h"
#include "comm/comm.h"
#include "hostjit/runtime.h"

namespace hj {

// A kernel resolved for one backend; owned by an hj_kernel_table.
struct KernelEntry {
  std::string name;              // the program's name, for messages and records
  std::vector<int32_t> params;   // hj_param_kind of each parameter
  hj_host_kernel_fn host = nullptr;
  void *function = nullptr;      // CUDA: CUfunction
  uint32_t launchFlags = 0;      // HJ_LAUNCH_*
  hj_dim3 cluster{0, 0, 0};      // thread-block cluster dims; 0 0 0: none
  hj_dim3 block{0, 0, 0};        // the only block it takes; 0 0 0: any
  bool clustered() const { return cluster.x != 0; }
  // A custom call instead of a kernel (hj_kernel_desc.custom_symbol): its
  // function, whether graph mode may capture it, and the hj_dtype of each
  // ptr and tensor parameter.
  hj_custom_call_fn custom = nullptr;
  bool capturable = false;
  std::vector<uint32_t> dtypes;
};

// One call of a collective node: hj_collective's arguments (a group is its
// bracket calls and the sends and receives between them).
struct CollectivePart {
  HOSTJIT_FIELDS((uint32_t, kind), (uint32_t, dtype), (uint32_t, op), (int32_t, peer), (uint64_t, count),
                 (std::string, what))  // what: the call and its site, for errors
};

// An executable graph: launched on the backend's stream 0, it runs its
// nodes in an order their dependencies allow; the launch is complete on
// that stream when all are. Made by Backend::buildGraph.
class Graph {
 public:
  virtual ~Graph() = default;
  // Gives node `index` new values: a kernel's arguments, grid and block (its
  // kernel and shared memory are those it was built with), a memset's or
  // fill's destination and size, a collective's or library call's buffers
  // (and a library call's shape), a custom call's arguments. Its kind and
  // dependencies are those it was built with. HJ_ERR_BACKEND when the
  // backend cannot make the change in place (the caller builds anew).
  // *onDevice: the change is applied by the graph's next launch itself (a
  // graph built for device updates), not by a driver call now.
  virtual int32_t update(size_t index, const GraphNode &node, bool *onDevice) = 0;
  virtual int32_t launch() = 0;
  // Whether its kernel nodes take their updates at launch (buildGraph's
  // deviceUpdates, where the backend could).
  virtual bool deviceUpdates() const = 0;
  // Whether a launch since the last ask found the device many launches
  // behind taking earlier launches' updates (the device, not the host, is
  // what calls wait for); asking clears it.
  virtual bool deviceBehind() = 0;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual hj_backend_kind kind() const = 0;
  virtual int32_t dlDeviceType() const = 0;
  virtual int32_t deviceId() const = 0;

  // Device memory. allocate returns HJ_ERR_OUT_OF_MEMORY when the device has
  // no room, so the caller can release cached blocks and retry.
  virtual int32_t allocate(size_t bytes, void **out) = 0;
  virtual void release(void *ptr) = 0;

  // Stream-ordered operations.
  virtual int32_t memsetZero(void *ptr, size_t bytes) = 0;
  // Fills bytes/width elements with `pattern` (width 1, 2, 4 or 8 bytes).
  virtual int32_t fill(void *ptr, size_t bytes, uint64_t pattern, unsigned width) = 0;
  virtual int32_t launch(const KernelEntry &kernel, const hj_dim3 &grid, const hj_dim3 &block,
                         uint32_t smem, void **params) = 0;

  // A matrix multiply (hj_matmul, checked), stream-ordered like a launch.
  // The host's is a plain loop; CUDA's is cuBLAS or cuBLASLt, loaded on
  // first use, or a graph launch replaying the library's captured work
  // (cuda/matmul_replays.h): *replayed says whether it was.
  virtual int32_t matmul(const MatmulCall &c, bool *replayed) = 0;

  // Builds an executable graph of `nodes` (graph mode).
  // deviceUpdates: kernel nodes take new arguments and grids at launch (on
  // CUDA, from an updater kernel at the graph's root; cuda_graph.h), where
  // the backend can; the graph says whether it does.
  virtual int32_t buildGraph(const std::vector<GraphNode> &nodes, bool deviceUpdates, std::unique_ptr<Graph> &out) = 0;

  // Streams. Stream 0 is the backend's own (nativeStream); addStream makes
  // the next one (1, 2, ...). The stream-ordered operations above, and the
  // events below, go to the current stream, 0 until setStream changes it.
  virtual int32_t addStream() = 0;
  virtual uint32_t numStreams() const = 0;
  virtual void setStream(uint32_t index) = 0;  // index < numStreams()
  virtual uint32_t currentStream() const = 0;
  // Events: made and destroyed here, recorded on and waited for by the
  // current stream. A new event counts as complete. A wait makes the
  // stream wait for the event's last record made before it (CUDA's rule).
  virtual int32_t createEvent(void **out) = 0;
  virtual void destroyEvent(void *event) = 0;
  virtual int32_t recordEvent(void *event) = 0;
  virtual int32_t waitEvent(void *event) = 0;
  // Timing events (profiling): recorded like any event; elapsedMs waits
  // for `to`'s last record and gives the milliseconds between `from`'s and
  // `to`'s (CUDA's cuEventElapsedTime; host: the wall clock at the records).
  virtual int32_t createTimingEvent(void **out) = 0;
  virtual int32_t elapsedMs(void *from, void *to, float *ms) = 0;
  // *done: the work before the event's last record has finished.
  virtual int32_t eventDone(void *event, bool *done) = 0;
  // Waits for the work queued on the current stream.
  virtual int32_t synchronizeStream() = 0;

  // Communicators (comm.h): NCCL on CUDA, made with the device current;
  // threads of this process on the host. A rank waits at most `timeout`
  // seconds for the others (infinity: no bound); `timeoutGiven`: the user
  // set it (hj_options.comm_timeout, HOSTJIT_COMM_TIMEOUT) rather than
  // leaving the default.
  virtual int32_t makeComm(const hj_comm_id &id, int32_t world, int32_t rank, double timeout, bool timeoutGiven,
                           std::unique_ptr<Comm> &out) = 0;
  // Runs f with the device current, giving it the current stream's native
  // handle (CUDA: its CUstream; host: NULL).
  virtual int32_t onDevice(const std::function<int32_t(void *stream)> &f) = 0;

  // Synchronous. The copies are ordered after all work of every stream.
  virtual int32_t copyToHost(void *dst, const void *src, size_t bytes) = 0;
  virtual int32_t copyFromHost(void *dst, const void *src, size_t bytes) = 0;
  // Waits for the work queued on every stream.
  virtual int32_t synchronize() = 0;

  // Resolves a kernel for this backend (done once per program load).
  virtual int32_t loadKernel(const hj_kernel_desc &desc, KernelEntry &out) = 0;
  // Host backend only: extra kernels by name, and libraries of kernels.
  virtual int32_t registerHostKernel(const char *name, hj_host_kernel_fn fn);
  virtual int32_t loadHostLibrary(const char *path);
  // The stream work is queued on (CUDA: CUstream), or nullptr.
  virtual void *nativeStream() const { return nullptr; }
  // Orders stream 0 with a stream of the caller's (hj_stream_after_native,
  // hj_native_after_stream): `after` true makes stream 0 wait for the work
  // queued so far on `native`; false makes `native` wait for stream 0's.
  // The host backend runs work when it is queued: only NULL is a stream.
  virtual int32_t joinNative(void *native, bool after);
  // Things a kernel table must keep alive after this backend is gone
  // (loaded libraries, CUDA modules).
  virtual std::shared_ptr<void> keepAlive() { return nullptr; }

  // Device faults. A kernel that fails on the device (an illegal address, a
  // trap) leaves the context unusable, and the driver reports it only to
  // later calls. Once a backend has seen one, faulty() is true, fault()
  // holds its cause and checkFault() fails every call with a message that
  // says so, instead of blaming the call that noticed it. A communicator
  // aborted by its watchdog (commFaulted, from the watchdog's thread) puts
  // the backend in the same state: the fault is set once, atomically.
  bool faulty() const { return faulty_.load(std::memory_order_acquire); }
  // True when the fault is a kernel's (not a communicator's).
  bool kernelFault() const { return faulty() && kernelFault_; }
  const std::string &fault() const;  // "" until faulty()
  int32_t checkFault() const { return faulty() ? faultError() : HJ_OK; }
  // Any thread: a communicator of this backend's context was aborted with
  // `message` (naming the rank, the collective, how long it waited).
  void commFaulted(const std::string &message);

 protected:
  // checkFault()'s error once a fault has been seen.
  int32_t faultError() const;
  // Keeps the first fault's cause and returns checkFault()'s error.
  int32_t faulted(const std::string &cause);

 private:
  void setFault(const std::string &cause, bool kernel);
  std::mutex faultMutex_;
  std::atomic<bool> faulty_{false};
  bool kernelFault_ = false;  // written before faulty_, read after it
  std::string fault_;         // likewise
};

// Host kernels report a device fault through hj_report_host_fault (or the
// hook a host-kernel library can declare, see hj_load_host_library); the
// host backend picks it up after the kernel returns. takeHostFault gives
// (and clears) the calling thread's report. hostFaultReports counts the
// reports of every thread: a launch takes the report only when the count
// moved, so launches without a fault touch no thread-local storage (which
// costs a call of __tls_get_addr each in position-independent code).
std::string takeHostFault();
extern std::atomic<uint64_t> gHostFaultReports;
inline uint64_t hostFaultReports() { return gHostFaultReports.load(std::memory_order_relaxed); }

std::unique_ptr<Backend> makeHostBackend();
// Creates the CUDA backend; HJ_ERR_NO_DRIVER when libcuda.so.1 is missing.
int32_t makeCudaBackend(int32_t device, void *stream, std::unique_ptr<Backend> &out);


}  // namespace hj

// A program's kernels resolved for one backend and device (hj_kernel_table_create).
struct hj_kernel_table {
  hj_backend_kind backend;
  int32_t device;
  std::vector<hj::KernelEntry> kernels;
  std::shared_ptr<void> keepAlive;  // what the kernels need after the backend is gone
};
