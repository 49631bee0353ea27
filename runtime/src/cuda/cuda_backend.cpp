// cuda_backend.cpp - the CUDA backend: the driver API loaded with dlopen at run time, the device's primary context, one stream, NVRTC-compiled kernels.
#include "backend/backend.h"
#include "base/error.h"

#ifndef HOSTJIT_HAVE_NVRTC

namespace hj {
int32_t makeCudaBackend(int32_t, void *, std::unique_ptr<Backend> &) {
  return fail(HJ_ERR_NO_DRIVER, "no CUDA support in this build");
}
}  // namespace hj

#else

#include <cuda.h>  // types, enums and prototypes only: libcuda is never linked

#include <array>
#include <cmath>
#include <cstdio>
#include <functional>
#include <optional>
#include <string>
#include <unordered_map>

#include "cuda/cuda_matmuls.h"
#include "cuda/cuda_comm_device.h"
#include "cuda/cuda_driver.h"
#include "cuda/cuda_graph.h"
#include "cuda/cuda_images.h"
#include "cuda/cuda_launch.h"
#include "cuda/nvrtc_compiler.h"

namespace hj {

namespace {

class CudaBackend final : public Backend {
 public:
  CudaBackend(const Driver &d, std::shared_ptr<CudaModules> modules, int32_t ordinal, int ccMajor, int ccMinor)
      : d_(d), modules_(std::move(modules)), ctx_(modules_->ctx), ordinal_(ordinal), ccMajor_(ccMajor),
        ccMinor_(ccMinor) {
    matmuls_.emplace(d_, ordinal_, ccMajor_, ccMinor_,
                     [this](const char *what, CUresult r) { return driverError(what, r); });
  }

  ~CudaBackend() override {
    CurrentContext cc(d_, ctx_);
    if (cc.result() != CUDA_SUCCESS) return;
    matmuls_.reset();  // the graphs, handles and workspaces go with the context current
    for (CUevent e : {joinIn_, joinOut_})
      if (e) d_.cuEventDestroy_v2(e);
    for (size_t i = 0; i < streams_.size(); ++i) {
      if (!streams_[i] || (i == 0 && !ownStream_)) continue;
      d_.cuStreamSynchronize(streams_[i]);
      d_.cuStreamDestroy_v2(streams_[i]);
    }
  }

  // Uses the caller's stream, or creates one that does not synchronise with
  // the legacy default stream.
  int32_t init(void *stream) {
    // CU_STREAM_LEGACY and CU_STREAM_PER_THREAD name a default stream of
    // whichever context is current: hostjit's, when it queues work.
    if (stream == CU_STREAM_LEGACY || stream == CU_STREAM_PER_THREAD) {
      stream_ = static_cast<CUstream>(stream);
      streams_.assign(1, stream_);
      return HJ_OK;
    }
    if (stream) {
      CUcontext owner = nullptr;
      if (CUresult r = d_.cuStreamGetCtx(static_cast<CUstream>(stream), &owner))
        return driverError("cuStreamGetCtx (the stream given in hj_options)", r);
      if (owner != ctx_)
        return fail(HJ_ERR_INVALID_ARGUMENT,
                    "the stream given in hj_options belongs to another CUDA context than the primary context of "
                    "device %d, which hostjit uses",
                    ordinal_);
      stream_ = static_cast<CUstream>(stream);
      streams_.assign(1, stream_);
      return HJ_OK;
    }
    CurrentContext cc(d_, ctx_);
    if (CUresult r = cc.result()) return driverError("cuCtxSetCurrent", r);
    if (CUresult r = d_.cuStreamCreate(&stream_, CU_STREAM_NON_BLOCKING)) {
      stream_ = nullptr;
      return driverError("cuStreamCreate", r);
    }
    ownStream_ = true;
    streams_.assign(1, stream_);
    return HJ_OK;
  }

  hj_backend_kind kind() const override { return HJ_BACKEND_CUDA; }
  void *nativeStream() const override { return streams_[0]; }
  int32_t dlDeviceType() const override { return 2; /* kDLCUDA */ }
  int32_t deviceId() const override { return ordinal_; }

  int32_t allocate(size_t bytes, void **out) override {
    CurrentContext cc(d_, ctx_);
    if (CUresult r = cc.result()) return driverError("cuCtxSetCurrent", r);
    CUdeviceptr p = 0;
    CUresult r = d_.cuMemAlloc_v2(&p, bytes ? bytes : 1);
    if (r == CUDA_ERROR_OUT_OF_MEMORY)
      return fail(HJ_ERR_OUT_OF_MEMORY, "out of device memory: cuMemAlloc of %zu bytes on CUDA device %d failed",
                  bytes, ordinal_);
    if (r != CUDA_SUCCESS && sticky(r)) return driverError("cuMemAlloc", r);
    if (r != CUDA_SUCCESS)
      return fail(HJ_ERR_BACKEND, "cuMemAlloc of %zu bytes on CUDA device %d failed: %s", bytes, ordinal_,
                  describe(d_, r).c_str());
    *out = reinterpret_cast<void *>(static_cast<uintptr_t>(p));
    return HJ_OK;
  }

  // Cannot fail (and sets no error): queued kernels may still use the memory,
  // so the stream is drained first.
  void release(void *ptr) override {
    if (!ptr) return;
    CurrentContext cc(d_, ctx_);
    if (cc.result() != CUDA_SUCCESS) return;
    for (CUstream s : streams_) d_.cuStreamSynchronize(s);
    d_.cuMemFree_v2(dptr(ptr));
  }

  int32_t memsetZero(void *ptr, size_t bytes) override {
    if (bytes == 0) return HJ_OK;
    CurrentContext cc(d_, ctx_);
    if (CUresult r = cc.result()) return driverError("cuCtxSetCurrent", r);
    if (CUresult r = d_.cuMemsetD8Async(dptr(ptr), 0, bytes, stream_)) return driverError("cuMemsetD8Async", r);
    return HJ_OK;
  }

  int32_t fill(void *ptr, size_t bytes, uint64_t pattern, unsigned width) override {
    size_t n = width ? bytes / width : 0;
    if (n == 0) return HJ_OK;
    CurrentContext cc(d_, ctx_);
    if (CUresult r = cc.result()) return driverError("cuCtxSetCurrent", r);
    CUdeviceptr p = dptr(ptr);
    CUresult r = CUDA_SUCCESS;
    const char *what = "cuMemsetD32Async";
    uint32_t lo = static_cast<uint32_t>(pattern), hi = static_cast<uint32_t>(pattern >> 32);
    switch (width) {
      case 1:
        what = "cuMemsetD8Async";
        r = d_.cuMemsetD8Async(p, static_cast<unsigned char>(pattern), n, stream_);
        break;
      case 2:
        what = "cuMemsetD16Async";
        r = d_.cuMemsetD16Async(p, static_cast<unsigned short>(pattern), n, stream_);
        break;
      case 4: r = d_.cuMemsetD32Async(p, lo, n, stream_); break;
      case 8:
        if (lo == hi) {
          r = d_.cuMemsetD32Async(p, lo, 2 * n, stream_);
        } else {
          // Two strided fills: the low words at p, p+8, ... and the high
          // words at p+4, p+12, ... (n rows of one 32-bit element, pitch 8).
          what = "cuMemsetD2D32Async";
          r = d_.cuMemsetD2D32Async(p, 8, lo, 1, n, stream_);
          if (r == CUDA_SUCCESS) r = d_.cuMemsetD2D32Async(p + 4, 8, hi, 1, n, stream_);
        }
        break;
      default: return fail(HJ_ERR_INVALID_ARGUMENT, "fill: element width %u is not 1, 2, 4 or 8", width);
    }
    if (r != CUDA_SUCCESS) return driverError(what, r);
    return HJ_OK;
  }

  int32_t launch(const KernelEntry &kernel, const hj_dim3 &grid, const hj_dim3 &block, uint32_t smem,
                 void **params) override {
    CurrentContext cc(d_, ctx_);
    if (CUresult r = cc.result()) return driverError("cuCtxSetCurrent", r);
    auto f = static_cast<CUfunction>(kernel.function);
    if (smem > kDefaultSharedLimit) {
      if (int32_t st = allowSharedMemory(kernel, f, smem)) return st;
    }
    CUresult r;
    const char *what = "cuLaunchKernel";
    if (kernel.launchFlags == 0 && !kernel.clustered()) {
      r = d_.cuLaunchKernel(f, grid.x, grid.y, grid.z, block.x, block.y, block.z, smem, stream_, params, nullptr);
    } else {
      if (kernel.launchFlags & HJ_LAUNCH_COOPERATIVE)
        if (int32_t st = coResidency_.check(d_, modules_->device, ordinal_, kernel, grid, block, smem)) return st;
      CUlaunchAttribute attrs[3];
      CUlaunchConfig config{};
      config.gridDimX = grid.x;
      config.gridDimY = grid.y;
      config.gridDimZ = grid.z;
      config.blockDimX = block.x;
      config.blockDimY = block.y;
      config.blockDimZ = block.z;
      config.sharedMemBytes = smem;
      config.hStream = stream_;
      config.attrs = attrs;
      config.numAttrs = launchAttributes(kernel, /*forGraph=*/false, attrs);
      what = "cuLaunchKernelEx";
      r = d_.cuLaunchKernelEx(&config, f, params, nullptr);
    }
    if (r != CUDA_SUCCESS && sticky(r)) return driverError(what, r);
    if (r != CUDA_SUCCESS)
      return fail(HJ_ERR_BACKEND, "%s failed for @%s grid(%u, %u, %u) block(%u, %u, %u) smem(%u)%s: %s", what,
                  kernel.name.c_str(), grid.x, grid.y, grid.z, block.x, block.y, block.z, smem,
                  attributeText(kernel).c_str(), describe(d_, r).c_str());
    return HJ_OK;
  }

  // An eager matmul: the library's call, or the replay of its capture.
  int32_t matmul(const MatmulCall &c, bool *replayed) override {
    *replayed = false;
    CurrentContext cc(d_, ctx_);
    if (CUresult r = cc.result()) return driverError("cuCtxSetCurrent", r);
    return matmuls_->eager(c, stream_, current_, replayed);
  }

  int32_t buildGraph(const std::vector<GraphNode> &nodes, bool deviceUpdates, std::unique_ptr<Graph> &out) override {
    CurrentContext cc(d_, ctx_);
    if (CUresult r = cc.result()) return driverError("cuCtxSetCurrent", r);
    const DeviceUpdateKit *kit = deviceUpdates ? updateKit() : nullptr;
    for (const GraphNode &node : nodes) {
      const KernelNode *n = std::get_if<KernelNode>(&node.op);
      if (!n) continue;
      if (n->smem > kDefaultSharedLimit)
        if (int32_t st = allowSharedMemory(*n->kernel, static_cast<CUfunction>(n->kernel->function), n->smem))
          return st;
      if (n->kernel->launchFlags & HJ_LAUNCH_COOPERATIVE)
        if (int32_t st = coResidency_.check(d_, modules_->device, ordinal_, *n->kernel, n->grid, n->block, n->smem))
          return st;
    }
    auto library = [this](const MatmulCall &c, CUstream s, uint32_t programStream) {
      return matmuls_->library(c, s, programStream);
    };
    return makeCudaGraph(d_, ctx_, streams_[0], ordinal_, [this](const std::string &cause) { return faulted(cause); },
                         library, kit, nodes, out);
  }

  // The copies run on stream 0 after every stream has drained (so they are
  // ordered after all kernels and before later ones) and are complete when
  // these return.
  int32_t copyToHost(void *dst, const void *src, size_t bytes) override {
    if (bytes == 0) return HJ_OK;
    if (int32_t st = synchronize()) return st;
    CurrentContext cc(d_, ctx_);
    if (CUresult r = cc.result()) return driverError("cuCtxSetCurrent", r);
    CUstream s = streams_[0];
    if (CUresult r = d_.cuMemcpyDtoHAsync_v2(dst, dptr(src), bytes, s)) return driverError("cuMemcpyDtoHAsync", r);
    if (CUresult r = d_.cuStreamSynchronize(s)) return driverError("cuStreamSynchronize", r);
    return checkFault();
  }

  int32_t copyFromHost(void *dst, const void *src, size_t bytes) override {
    if (bytes == 0) return HJ_OK;
    if (int32_t st = synchronize()) return st;
    CurrentContext cc(d_, ctx_);
    if (CUresult r = cc.result()) return driverError("cuCtxSetCurrent", r);
    CUstream s = streams_[0];
    if (CUresult r = d_.cuMemcpyHtoDAsync_v2(dptr(dst), src, bytes, s)) return driverError("cuMemcpyHtoDAsync", r);
    if (CUresult r = d_.cuStreamSynchronize(s)) return driverError("cuStreamSynchronize", r);
    return checkFault();
  }

  int32_t synchronize() override {
    CurrentContext cc(d_, ctx_);
    if (CUresult r = cc.result()) return driverError("cuCtxSetCurrent", r);
    for (CUstream s : streams_)
      if (CUresult r = d_.cuStreamSynchronize(s)) return driverError("cuStreamSynchronize", r);
    return checkFault();  // a communicator aborted while this waited: its kernels returned, their work undone
  }

  int32_t addStream() override {
    CurrentContext cc(d_, ctx_);
    if (CUresult r = cc.result()) return driverError("cuCtxSetCurrent", r);
    CUstream s = nullptr;
    if (CUresult r = d_.cuStreamCreate(&s, CU_STREAM_NON_BLOCKING)) return driverError("cuStreamCreate", r);
    try {
      streams_.push_back(s);
    } catch (...) {
      d_.cuStreamDestroy_v2(s);
      throw;
    }
    return HJ_OK;
  }
  uint32_t numStreams() const override { return static_cast<uint32_t>(streams_.size()); }
  void setStream(uint32_t index) override {
    current_ = index;
    stream_ = streams_[index];
  }
  uint32_t currentStream() const override { return current_; }

  int32_t createEvent(void **out) override { return makeEvent(CU_EVENT_DISABLE_TIMING, out); }
  int32_t createTimingEvent(void **out) override { return makeEvent(CU_EVENT_DEFAULT, out); }
  int32_t makeEvent(unsigned flags, void **out) {
    CurrentContext cc(d_, ctx_);
    if (CUresult r = cc.result()) return driverError("cuCtxSetCurrent", r);
    CUevent e = nullptr;
    if (CUresult r = d_.cuEventCreate(&e, flags)) return driverError("cuEventCreate", r);
    *out = e;
    return HJ_OK;
  }
  int32_t elapsedMs(void *from, void *to, float *ms) override {
    CurrentContext cc(d_, ctx_);
    if (CUresult r = cc.result()) return driverError("cuCtxSetCurrent", r);
    if (CUresult r = d_.cuEventSynchronize(static_cast<CUevent>(to))) return driverError("cuEventSynchronize", r);
    if (CUresult r = d_.cuEventElapsedTime_v2(ms, static_cast<CUevent>(from), static_cast<CUevent>(to)))
      return driverError("cuEventElapsedTime", r);
    return HJ_OK;
  }
  void destroyEvent(void *event) override {
    CurrentContext cc(d_, ctx_);
    if (event && cc.result() == CUDA_SUCCESS) d_.cuEventDestroy_v2(static_cast<CUevent>(event));
  }
  int32_t recordEvent(void *event) override {
    CurrentContext cc(d_, ctx_);
    if (CUresult r = cc.result()) return driverError("cuCtxSetCurrent", r);
    if (CUresult r = d_.cuEventRecord(static_cast<CUevent>(event), stream_)) return driverError("cuEventRecord", r);
    return HJ_OK;
  }
  int32_t waitEvent(void *event) override {
    CurrentContext cc(d_, ctx_);
    if (CUresult r = cc.result()) return driverError("cuCtxSetCurrent", r);
    if (CUresult r = d_.cuStreamWaitEvent(stream_, static_cast<CUevent>(event), 0))
      return driverError("cuStreamWaitEvent", r);
    return HJ_OK;
  }
  int32_t joinNative(void *native, bool after) override {
    const char *fn = after ? "hj_stream_after_native" : "hj_native_after_stream";
    CUstream from = after ? static_cast<CUstream>(native) : streams_[0];
    CUstream to = after ? streams_[0] : static_cast<CUstream>(native);
    auto legacy = [](CUstream s) { return s == nullptr || s == CU_STREAM_LEGACY; };
    if (from == to || (legacy(from) && legacy(to))) return HJ_OK;
    CurrentContext cc(d_, ctx_);
    if (CUresult r = cc.result()) return driverError("cuCtxSetCurrent", r);
    CUevent &e = after ? joinIn_ : joinOut_;
    if (!e) {
      if (CUresult r = d_.cuEventCreate(&e, CU_EVENT_DISABLE_TIMING)) {
        e = nullptr;
        return driverError("cuEventCreate", r);
      }
    }
    if (CUresult r = d_.cuEventRecord(e, from))
      return fail(HJ_ERR_INVALID_ARGUMENT, "%s: cuEventRecord on %s failed: %s (a stream of CUDA device %d expected)",
                  fn, after ? "the stream given" : "stream 0", describe(d_, r).c_str(), ordinal_);
    if (CUresult r = d_.cuStreamWaitEvent(to, e, 0))
      return fail(HJ_ERR_INVALID_ARGUMENT, "%s: cuStreamWaitEvent on %s failed: %s (a stream of CUDA device %d expected)",
                  fn, after ? "stream 0" : "the stream given", describe(d_, r).c_str(), ordinal_);
    return HJ_OK;
  }
  int32_t eventDone(void *event, bool *done) override {
    CurrentContext cc(d_, ctx_);
    if (CUresult r = cc.result()) return driverError("cuCtxSetCurrent", r);
    CUresult r = d_.cuEventQuery(static_cast<CUevent>(event));
    if (r != CUDA_SUCCESS && r != CUDA_ERROR_NOT_READY) return driverError("cuEventQuery", r);
    *done = r == CUDA_SUCCESS;
    return HJ_OK;
  }
  int32_t makeComm(const hj_comm_id &id, int32_t world, int32_t rank, double timeout, bool timeoutGiven,
                   std::unique_ptr<Comm> &out) override {
    // Several ranks without a timeout the user asked for: NCCL's blocking
    // calls, the path that has run on two H200s. The non-blocking one with
    // its watchdog (NCCL then runs each group in a thread of its own) has
    // run with one rank only; it is an opt-in until it has run with more
    // (docs/spmd.md#when-a-rank-is-lost).
    if (world > 1 && !timeoutGiven) timeout = HUGE_VAL;
    CurrentContext cc(d_, ctx_);
    if (CUresult r = cc.result()) return driverError("cuCtxSetCurrent", r);
    return makeNcclComm(id, world, rank, timeout, makeCudaCommDevice(d_, ctx_, *this), out);
  }
  int32_t onDevice(const std::function<int32_t(void *)> &f) override {
    CurrentContext cc(d_, ctx_);
    if (CUresult r = cc.result()) return driverError("cuCtxSetCurrent", r);
    return f(stream_);
  }

  int32_t synchronizeStream() override {
    CurrentContext cc(d_, ctx_);
    if (CUresult r = cc.result()) return driverError("cuCtxSetCurrent", r);
    if (CUresult r = d_.cuStreamSynchronize(stream_)) return driverError("cuStreamSynchronize", r);
    return checkFault();
  }

  // Compiles (or finds cached) the kernel's source, or checks its compiled
  // image, loads the module once per image into this context and resolves
  // the entry point.
  int32_t loadKernel(const hj_kernel_desc &desc, KernelEntry &out) override {
    const char *name = desc.name ? desc.name : "?";
    if ((!desc.cuda_source && !desc.cuda_image) || !desc.cuda_entry)
      return fail(HJ_ERR_NOT_FOUND,
                  "kernel @%s has no CUDA implementation (give it `cuda = ...` or `image = ...`, and `entry = ...`)",
                  name);
    const char *path = desc.cuda_path ? desc.cuda_path : "<source>";
    CurrentContext cc(d_, ctx_);
    if (CUresult r = cc.result()) return driverError("cuCtxSetCurrent", r);
    auto build = [&](bool fresh, CudaImage &image) {
      return desc.cuda_image ? prepareCudaImage(d_, desc, ordinal_, ccMajor_, ccMinor_, fresh, image)
                             : compileCudaKernel(desc, ccMajor_, ccMinor_, fresh, image);
    };
    CudaImage image;
    if (int32_t st = build(/*fresh=*/false, image)) return st;
    auto slot = modules_->modules.emplace(image.key, nullptr);
    if (slot.second) {
      CUmodule mod = nullptr;
      CUresult r = d_.cuModuleLoadData(&mod, image.data->data());
      if (r != CUDA_SUCCESS && !image.compiled && !sticky(r)) {
        // A cached image the driver refuses (a damaged file): rebuild it once.
        int32_t st = build(/*fresh=*/true, image);
        if (st != HJ_OK) {
          modules_->modules.erase(slot.first);
          return st;
        }
        r = d_.cuModuleLoadData(&mod, image.data->data());
      }
      if (r != CUDA_SUCCESS) {
        modules_->modules.erase(slot.first);
        if (sticky(r)) return driverError("cuModuleLoadData", r);
        return fail(HJ_ERR_BACKEND, "cuModuleLoadData failed for kernel @%s (%s) on CUDA device %d (sm_%d%d): %s",
                    name, path, ordinal_, ccMajor_, ccMinor_, describe(d_, r).c_str());
      }
      slot.first->second = mod;
    }
    CUfunction f = nullptr;
    CUresult r = d_.cuModuleGetFunction(&f, slot.first->second, desc.cuda_entry);
    if (r == CUDA_ERROR_NOT_FOUND)
      return fail(HJ_ERR_NOT_FOUND,
                  "kernel @%s: entry point '%s' not found in %s (is it declared extern \"C\" __global__?)", name,
                  desc.cuda_entry, path);
    if (r != CUDA_SUCCESS)
      return fail(HJ_ERR_BACKEND, "cuModuleGetFunction('%s') failed for kernel @%s (%s): %s", desc.cuda_entry, name,
                  path, describe(d_, r).c_str());
    out.function = f;
    if (uint64_t(out.cluster.x) * out.cluster.y * out.cluster.z > 8) {
      // More than the portable 8 blocks a cluster needs the kernel's consent.
      CUresult ra = d_.cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1);
      if (ra != CUDA_SUCCESS)
        return fail(HJ_ERR_BACKEND, "kernel @%s: cluster(%u, %u, %u) is larger than 8 blocks, and CUDA device %d "
                    "does not allow it (cuFuncSetAttribute(NON_PORTABLE_CLUSTER_SIZE_ALLOWED)): %s", name,
                    out.cluster.x, out.cluster.y, out.cluster.z, ordinal_, describe(d_, ra).c_str());
    }
    return HJ_OK;
  }

  std::shared_ptr<void> keepAlive() override { return modules_; }

 private:
  static constexpr uint32_t kDefaultSharedLimit = 48u << 10;  // bytes without opting in

  // Errors after which the context is unusable: a kernel faulted.
 public:
  static bool sticky(CUresult r) {
    switch (r) {
      case CUDA_ERROR_ILLEGAL_ADDRESS:
      case CUDA_ERROR_LAUNCH_TIMEOUT:
      case CUDA_ERROR_ASSERT:
      case CUDA_ERROR_HARDWARE_STACK_ERROR:
      case CUDA_ERROR_ILLEGAL_INSTRUCTION:
      case CUDA_ERROR_MISALIGNED_ADDRESS:
      case CUDA_ERROR_INVALID_ADDRESS_SPACE:
      case CUDA_ERROR_INVALID_PC:
      case CUDA_ERROR_LAUNCH_FAILED:
      case CUDA_ERROR_ECC_UNCORRECTABLE:
      case CUDA_ERROR_CONTEXT_IS_DESTROYED: return true;
      default: return false;
    }
  }

 private:

  int32_t driverError(const char *what, CUresult r) {
    if (sticky(r)) return faulted(describe(d_, r) + " on CUDA device " + std::to_string(ordinal_));
    return fail(HJ_ERR_BACKEND, "%s failed on CUDA device %d: %s", what, ordinal_, describe(d_, r).c_str());
  }

  // Opts a kernel in to more than 48 KiB of dynamic shared memory. Done at
  // every such launch (a cheap driver call): a cache keyed by CUfunction
  // could outlive the module, and tables are shared between contexts.
  int32_t allowSharedMemory(const KernelEntry &kernel, CUfunction f, uint32_t smem) {
    CUresult r = d_.cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, static_cast<int>(smem));
    if (r != CUDA_SUCCESS)
      return fail(HJ_ERR_BACKEND,
                  "cannot give @%s %u bytes of dynamic shared memory on CUDA device %d "
                  "(cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)): %s",
                  kernel.name.c_str(), smem, ordinal_, describe(d_, r).c_str());
    return HJ_OK;
  }

  // The updater and the kernels' parameter layouts, made on first use; NULL
  // when the updater cannot be had (said once on stderr: graphs are then
  // updated by the host).
  const DeviceUpdateKit *updateKit() {
    if (!updaterTried_) {
      updaterTried_ = true;
      CUfunction fn = nullptr;
      if (loadUpdater(d_, *modules_, ccMajor_, ccMinor_, &fn) != HJ_OK) {
        std::fprintf(stderr, "hostjit: graph nodes are updated by the host on CUDA device %d: %s\n", ordinal_,
                     hj_last_error());
      } else {
        kit_.updater = fn;
        kit_.layout = [this](const KernelEntry &k) -> const ParamLayout * {
          auto f = static_cast<CUfunction>(k.function);
          auto it = layouts_.find(f);
          if (it == layouts_.end()) {
            auto layout = std::make_unique<ParamLayout>();
            if (paramLayout(d_, f, k.params.size(), *layout) != HJ_OK) layout.reset();
            it = layouts_.emplace(f, std::move(layout)).first;
          }
          return it->second.get();
        };
      }
    }
    return kit_.updater ? &kit_ : nullptr;
  }

  // " cluster(x, y, z) cooperative pdl", as far as the kernel has them.
  static std::string attributeText(const KernelEntry &k) {
    std::string s;
    if (k.clustered())
      s += " cluster(" + std::to_string(k.cluster.x) + ", " + std::to_string(k.cluster.y) + ", " +
           std::to_string(k.cluster.z) + ")";
    if (k.launchFlags & HJ_LAUNCH_COOPERATIVE) s += " cooperative";
    if (k.launchFlags & HJ_LAUNCH_PDL) s += " pdl";
    return s;
  }

  const Driver &d_;
  std::shared_ptr<CudaModules> modules_;
  CoResidency coResidency_;
  std::optional<CudaMatmuls> matmuls_;  // cuBLAS, cuBLASLt, workspaces, replays; reset with the context current
  bool updaterTried_ = false;       // device updates: updateKit()
  DeviceUpdateKit kit_;
  std::unordered_map<CUfunction, std::unique_ptr<ParamLayout>> layouts_;  // NULL: none (updated by the host)
  CUcontext ctx_;
  int32_t ordinal_;
  int ccMajor_, ccMinor_;
  CUstream stream_ = nullptr;  // the current stream
  std::vector<CUstream> streams_;  // stream 0: the caller's or our own; then those addStream made
  uint32_t current_ = 0;
  bool ownStream_ = false;
  CUevent joinIn_ = nullptr, joinOut_ = nullptr;  // joinNative's, made on first use
};

}  // namespace

int32_t makeCudaBackend(int32_t device, void *stream, std::unique_ptr<Backend> &out) {
  const Driver &d = driver();
  if (d.status != HJ_OK) return fail(d.status, "%s", d.error.c_str());
  int count = 0;
  if (CUresult r = d.cuDeviceGetCount(&count))
    return fail(HJ_ERR_NO_DRIVER, "no CUDA device found: cuDeviceGetCount failed with %s", describe(d, r).c_str());
  if (count <= 0) return fail(HJ_ERR_NO_DRIVER, "no CUDA device found (the driver reports none)");
  if (device < 0 || device >= count)
    return fail(HJ_ERR_INVALID_ARGUMENT, "CUDA device %d does not exist: this machine has %d (0 to %d)", device, count,
                count - 1);
  CUdevice dev = 0;
  if (CUresult r = d.cuDeviceGet(&dev, device))
    return fail(HJ_ERR_BACKEND, "cuDeviceGet(%d) failed: %s", device, describe(d, r).c_str());
  int major = 0, minor = 0;
  CUresult r = d.cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
  if (r == CUDA_SUCCESS) r = d.cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
  if (r != CUDA_SUCCESS)
    return fail(HJ_ERR_BACKEND, "cannot read the compute capability of CUDA device %d: %s", device,
                describe(d, r).c_str());
  auto modules = std::make_shared<CudaModules>(d, dev);
  if (CUresult rr = d.cuDevicePrimaryCtxRetain(&modules->ctx, dev)) {
    modules->ctx = nullptr;
    if (CudaBackend::sticky(rr))
      return fail(HJ_ERR_BACKEND,
                  "CUDA device %d cannot be used again in this process: a kernel failed on it earlier (%s), and the "
                  "driver requires the process to be restarted",
                  device, describe(d, rr).c_str());
    return fail(HJ_ERR_BACKEND, "cannot retain the primary context of CUDA device %d: %s", device,
                describe(d, rr).c_str());
  }
  auto backend = std::make_unique<CudaBackend>(d, std::move(modules), device, major, minor);
  if (int32_t st = backend->init(stream)) return st;
  out = std::move(backend);
  return HJ_OK;
}

}  // namespace hj

#endif  // HOSTJIT_HAVE_NVRTC
