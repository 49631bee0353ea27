// matmul_replays.cpp - eager matmuls captured once and launched as graphs.
#include "cuda/matmul_replays.h"

#ifdef HOSTJIT_HAVE_NVRTC

#include <cstdlib>

#include "base/error.h"

namespace hj {

namespace {

size_t capacityFromEnv(std::string *error) {
  size_t n = 0;
  if (!matmulReplayCapacity(std::getenv("HOSTJIT_MATMUL_REPLAYS"), &n, error)) return 0;
  return n;
}

}  // namespace

MatmulReplays::MatmulReplays(const Driver &d, Library library, DriverError driverError)
    : d_(d), library_(std::move(library)), driverError_(std::move(driverError)), index_(capacityFromEnv(&error_)) {}

MatmulReplays::~MatmulReplays() {
  // A graph still running is released when it completes (cuGraphExecDestroy).
  index_.clear([this](uintptr_t h) { d_.cuGraphExecDestroy(reinterpret_cast<CUgraphExec>(h)); });
  if (capture_) d_.cuStreamDestroy_v2(capture_);
}

int32_t MatmulReplays::issue(const MatmulCall &c, CUstream stream, bool *replayed) {
  *replayed = false;
  if (!error_.empty()) return fail(HJ_ERR_INVALID_ARGUMENT, "%s: %s", c.site, error_.c_str());
  if (index_.capacity() == 0) return library_(c, stream);
  MatmulKey key = matmulKey(c);
  uintptr_t handle = 0;
  MatmulReplayIndex::Step step = index_.find(key, &handle);
  if (step == MatmulReplayIndex::Step::Direct) return library_(c, stream);
  if (step == MatmulReplayIndex::Step::Replay && handle == 0) return library_(c, stream);
  // A caller capturing this stream gets the library's own calls in its graph.
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  if (d_.cuStreamIsCapturing(stream, &status) != CUDA_SUCCESS || status != CU_STREAM_CAPTURE_STATUS_NONE)
    return library_(c, stream);
  if (step == MatmulReplayIndex::Step::Capture) {
    CUgraphExec exec = nullptr;
    if (int32_t st = capture(c, &exec)) return st;
    if (uintptr_t dropped = index_.add(key, reinterpret_cast<uintptr_t>(exec)))
      d_.cuGraphExecDestroy(reinterpret_cast<CUgraphExec>(dropped));
    if (!exec) return library_(c, stream);
    handle = reinterpret_cast<uintptr_t>(exec);
  }
  if (CUresult r = d_.cuGraphLaunch(reinterpret_cast<CUgraphExec>(handle), stream))
    return driverError_("cuGraphLaunch (a matmul's replay)", r);
  *replayed = true;
  return HJ_OK;
}

int32_t MatmulReplays::capture(const MatmulCall &c, CUgraphExec *exec) {
  *exec = nullptr;
  if (!capture_)
    if (CUresult r = d_.cuStreamCreate(&capture_, CU_STREAM_NON_BLOCKING)) return driverError_("cuStreamCreate", r);
  if (d_.cuStreamBeginCapture_v2(capture_, CU_STREAM_CAPTURE_MODE_RELAXED) != CUDA_SUCCESS) return HJ_OK;
  // The library's refusal here is not the call's: the call then goes to the
  // library directly, which reports its own.
  int32_t st = library_(c, capture_);
  CUgraph g = nullptr;
  CUresult r = d_.cuStreamEndCapture(capture_, &g);
  if (st == HJ_OK && r == CUDA_SUCCESS && g) {
    if (d_.cuGraphInstantiateWithFlags(exec, g, 0) != CUDA_SUCCESS) *exec = nullptr;
  }
  if (g) d_.cuGraphDestroy(g);
  return HJ_OK;
}

}  // namespace hj

#endif  // HOSTJIT_HAVE_NVRTC
