// cuda_comm_device.cpp - a CUDA communicator's events and fault sink (cuda_comm_device.h).
#include "cuda/cuda_comm_device.h"

#ifdef HOSTJIT_HAVE_NVRTC

#include "base/error.h"

namespace hj {

namespace {

// The watchdog's thread queries in relaxed capture mode: a query made in the
// default (global) mode while another thread, the caller's, captures a graph
// in global mode would invalidate that capture.
class RelaxedCapture {
 public:
  explicit RelaxedCapture(const Driver &d) : d_(d) { ok_ = d_.cuThreadExchangeStreamCaptureMode(&mode_) == CUDA_SUCCESS; }
  ~RelaxedCapture() {
    if (ok_) d_.cuThreadExchangeStreamCaptureMode(&mode_);
  }
  RelaxedCapture(const RelaxedCapture &) = delete;
  RelaxedCapture &operator=(const RelaxedCapture &) = delete;

 private:
  const Driver &d_;
  CUstreamCaptureMode mode_ = CU_STREAM_CAPTURE_MODE_RELAXED;
  bool ok_ = false;
};

class CudaCommDevice final : public CommDevice {
 public:
  CudaCommDevice(const Driver &d, CUcontext ctx, Backend &backend) : d_(d), ctx_(ctx), backend_(backend) {}

  int32_t makeEvent(void **out) override {
    CurrentContext cc(d_, ctx_);
    CUevent e = nullptr;
    CUresult r = cc.result();
    if (r == CUDA_SUCCESS) r = d_.cuEventCreate(&e, CU_EVENT_DISABLE_TIMING);
    if (r != CUDA_SUCCESS)
      return fail(HJ_ERR_BACKEND, "cuEventCreate for the communicator's watchdog failed: %s", describe(d_, r).c_str());
    *out = e;
    return HJ_OK;
  }

  int32_t record(void *event, void *stream, bool *recorded) override {
    CurrentContext cc(d_, ctx_);  // a default stream is the current context's
    CUresult r = cc.result();
    CUstreamCaptureStatus capturing = CU_STREAM_CAPTURE_STATUS_NONE;
    if (r == CUDA_SUCCESS) r = d_.cuStreamIsCapturing(static_cast<CUstream>(stream), &capturing);
    *recorded = r == CUDA_SUCCESS && capturing == CU_STREAM_CAPTURE_STATUS_NONE;
    if (r == CUDA_SUCCESS && !*recorded) return HJ_OK;  // the caller's capture: its graph's launches are the caller's
    if (r == CUDA_SUCCESS) r = d_.cuEventRecord(static_cast<CUevent>(event), static_cast<CUstream>(stream));
    if (r != CUDA_SUCCESS)
      return fail(HJ_ERR_BACKEND, "cuEventRecord for the communicator's watchdog failed: %s", describe(d_, r).c_str());
    return HJ_OK;
  }

  int query(void *event) override {
    RelaxedCapture relaxed(d_);
    CurrentContext cc(d_, ctx_);
    if (cc.result() != CUDA_SUCCESS) return -1;
    CUresult r = d_.cuEventQuery(static_cast<CUevent>(event));
    return r == CUDA_SUCCESS ? 1 : r == CUDA_ERROR_NOT_READY ? 0 : -1;
  }

  void destroyEvent(void *event) override {
    RelaxedCapture relaxed(d_);
    CurrentContext cc(d_, ctx_);
    if (cc.result() == CUDA_SUCCESS) d_.cuEventDestroy_v2(static_cast<CUevent>(event));
  }

  void fault(const std::string &message) override { backend_.commFaulted(message); }

 private:
  const Driver &d_;
  CUcontext ctx_;
  Backend &backend_;
};

}  // namespace

std::unique_ptr<CommDevice> makeCudaCommDevice(const Driver &d, CUcontext ctx, Backend &backend) {
  return std::make_unique<CudaCommDevice>(d, ctx, backend);
}

}  // namespace hj

#endif  // HOSTJIT_HAVE_NVRTC
