// device_updates.h - graph updates applied on the device: a kernel at the
// root of a graph (the updater) gives the graph's device-updatable kernel
// nodes the arguments and grids the host posted for that launch, so a
// changed node costs the host a few stores instead of a driver call.
#pragma once

#ifdef HOSTJIT_HAVE_NVRTC

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "cuda/cuda_driver.h"
#include "hostjit/runtime.h"

namespace hj {

// The updater kernel of the context: compiled with NVRTC (-rdc) and linked
// with the toolkit's libcudadevrt.a ($HOSTJIT_CUDADEVRT, else beside NVRTC,
// $CUDA_HOME/lib64, /usr/local/cuda/lib64, /usr/lib/x86_64-linux-gnu),
// loaded into `modules` once. HJ_OK with *fn set; else an error whose text
// says why (graph mode then builds graphs whose nodes the host updates).
int32_t loadUpdater(const Driver &d, CudaModules &modules, int ccMajor, int ccMinor, CUfunction *fn);

// Where a kernel's parameters lie in its parameter buffer (cuFuncGetParamInfo).
struct ParamLayout {
  std::vector<uint32_t> offset, size;
  uint32_t bytes = 0;  // the buffer's size: the end of the last parameter
};
int32_t paramLayout(const Driver &d, CUfunction f, size_t numParams, ParamLayout &out);

// The slots through which one graph's launches get their updates: pinned
// host memory the updater reads (slot `launch % kSlots`) and copies to
// device memory before applying. The host fills the slot of the next launch
// and tags it; the updater of a launch whose slot is not tagged for it
// applies nothing. A slot is filled again only once the launch that last
// used it has run its updater (acquire() polls the stream meanwhile), so a
// caller may queue up to kSlots launches with updates ahead of the device.
class UpdateRing {
 public:
  static constexpr uint32_t kSlots = 64;
  // Room for `maxUpdates` updates and `maxData` bytes of parameters a launch.
  static int32_t make(const Driver &d, CUstream stream, uint32_t maxUpdates, uint32_t maxData,
                      std::unique_ptr<UpdateRing> &out);
  ~UpdateRing();
  UpdateRing(const UpdateRing &) = delete;
  UpdateRing &operator=(const UpdateRing &) = delete;

  void **args() { return args_; }  // the updater's kernel parameters
  // Whether a grid update and a parameter update of `bytes` more fit this launch.
  bool room(uint32_t bytes) const;
  // Queue updates for the next launch (room() said yes); param returns where
  // its `bytes` of parameter data go.
  int32_t grid(CUgraphDeviceNode node, const hj_dim3 &g);
  int32_t param(CUgraphDeviceNode node, uint32_t bytes, unsigned char **data);
  // Before cuGraphLaunch: tags the slot if updates are queued (an error if
  // an earlier launch's update failed on the device). After a launch that
  // was queued: the next launch is the next slot's.
  int32_t post();
  void launched();
  // Drops what is queued for the next launch (its tag too).
  void discard();
  // Waits until every launch so far has applied its updates (before the
  // host sets a device-updatable node itself: doing so while the device
  // updates it is undefined). An error if an update failed on the device.
  int32_t drain();
  int32_t failed() const;  // HJ_ERR_BACKEND with the device's error, if an update failed
  // Changes with every launch and every discard: what is queued carries it.
  uint64_t generation() const { return generation_; }
  // Whether, since the last ask, updates were queued while the device had
  // yet to take those of kBehind or more earlier launches (clears it).
  static constexpr uint64_t kBehind = 16;
  bool takeBehind() { return std::exchange(behind_, false); }

 private:
  UpdateRing(const Driver &d, CUstream stream) : d_(d), stream_(stream) {}
  int32_t acquire();  // waits until the next launch's slot is free
  unsigned char *slot(uint64_t launch) const { return host_ + kHeader + (launch % kSlots) * slotBytes_; }

  static constexpr size_t kHeader = 64, kUpdateBytes = 40, kSlotHead = 16;
  const Driver &d_;
  CUstream stream_;
  unsigned char *host_ = nullptr;  // pinned: [consumed][slot 0]..[slot kSlots-1]
  CUdeviceptr device_ = 0, scratch_ = 0;  // the ring as the device sees it; [launch counter][slot copy]
  uint64_t slotBytes_ = 0, launch_ = 0, generation_ = 0;
  uint32_t maxUpdates_ = 0, maxData_ = 0, count_ = 0, data_ = 0;
  bool acquired_ = false, behind_ = false;
  uint32_t maxUpdatesArg_ = 0, slotsArg_ = kSlots;
  void *args_[5] = {};
};

}  // namespace hj

#endif  // HOSTJIT_HAVE_NVRTC
