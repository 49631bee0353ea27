// cuda_comm_device.h - what a CUDA communicator's watchdog asks of the device
// (comm.h's CommDevice): events on the driver, and the backend's fault state.
#pragma once

#ifdef HOSTJIT_HAVE_NVRTC

#include <memory>

#include "backend/backend.h"
#include "cuda/cuda_driver.h"

namespace hj {

// `backend` (the one whose context `ctx` is) must outlive the result.
std::unique_ptr<CommDevice> makeCudaCommDevice(const Driver &d, CUcontext ctx, Backend &backend);

}  // namespace hj

#endif  // HOSTJIT_HAVE_NVRTC
