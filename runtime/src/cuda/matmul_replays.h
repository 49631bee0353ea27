// matmul_replays.h - a CUDA context's eager matmuls issued as graph launches:
// a call seen a second time with the same work (matmul_replay_index.h) is
// captured from cuBLAS or cuBLASLt into a graph of its own, and that call
// and later ones launch the graph, which costs the host a graph launch
// instead of the library's own per-call work. The captured graph is the
// library's own kernels with the same arguments, so results are the same
// bits. HOSTJIT_MATMUL_REPLAYS sets how many a context keeps (0: none).
#pragma once

#ifdef HOSTJIT_HAVE_NVRTC

#include <cuda.h>

#include <functional>
#include <string>

#include "base/call_path.h"
#include "cuda/cuda_driver.h"
#include "cuda/matmul_replay_index.h"

namespace hj {

class MatmulReplays {
 public:
  // The library's call of c on a stream (cuBLAS or cuBLASLt).
  using Library = std::function<int32_t(const MatmulCall &c, CUstream stream)>;
  // A driver call failed: the backend's error (a sticky one faults it).
  using DriverError = std::function<int32_t(const char *what, CUresult r)>;

  // Reads HOSTJIT_MATMUL_REPLAYS once.
  MatmulReplays(const Driver &d, Library library, DriverError driverError);
  ~MatmulReplays();  // releases the graphs: call with the context current
  MatmulReplays(const MatmulReplays &) = delete;
  MatmulReplays &operator=(const MatmulReplays &) = delete;

  // Queues c on `stream` (c's workspace already given), by its replay when
  // it has one, capturing it the second time c's work is seen, through the
  // library otherwise, and when `stream` is being captured by someone else.
  // *replayed: whether a graph launch issued it. A capture the library or
  // the driver refuses is not tried again for that work: the call goes to
  // the library directly. Errors: HJ_ERR_INVALID_ARGUMENT naming c's site
  // for a bad HOSTJIT_MATMUL_REPLAYS; the library's and the driver's.
  int32_t issue(const MatmulCall &c, CUstream stream, bool *replayed);

 private:
  // Captures c into a new executable graph (*exec 0 when it cannot be).
  int32_t capture(const MatmulCall &c, CUgraphExec *exec);

  const Driver &d_;
  Library library_;
  DriverError driverError_;
  std::string error_;  // a bad setting, reported by every call
  MatmulReplayIndex index_;
  CUstream capture_ = nullptr;  // where calls are captured, made on first use
};

}  // namespace hj

#endif  // HOSTJIT_HAVE_NVRTC
