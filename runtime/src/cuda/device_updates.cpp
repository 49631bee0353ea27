// device_updates.cpp - the graph updater kernel (compiled, linked with
// libcudadevrt, loaded) and the pinned slots that carry its updates.
#ifdef HOSTJIT_HAVE_NVRTC

#include "cuda/device_updates.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "base/error.h"
#include "cuda/nvrtc_compiler.h"

namespace hj {

namespace {

// Launch `n` reads slot n % slots; a slot is for it when its tag is n + 1.
// Its updates are copied to device memory and applied by many threads, one
// node's (consecutive) updates each, since the driver applies each update
// in about 0.7 us of device time. The launch counter lives in device
// memory; `consumed` (in the pinned ring) tells the host which slots are
// free again, and `failed` the first error of an update, after which the
// updater traps: the context faults rather than run nodes with stale
// values.
const char kUpdaterSource[] = R"(
struct Head { unsigned long long tag; unsigned count, dataBytes; };
extern "C" __global__ void hostjit_apply_graph_updates(unsigned char *ring, unsigned long long slotBytes,
                                                       unsigned slots, unsigned maxUpdates, unsigned char *scratch) {
  __shared__ unsigned long long seq;
  __shared__ unsigned count, dataBytes;
  unsigned long long *launches = (unsigned long long *)scratch;
  if (threadIdx.x == 0) {
    seq = *launches;
    const volatile Head *h = (const volatile Head *)(ring + 64 + (seq % slots) * slotBytes);
    bool mine = h->tag == seq + 1;
    count = mine ? h->count : 0;
    dataBytes = mine ? h->dataBytes : 0;
  }
  __syncthreads();
  const unsigned char *slot = ring + 64 + (seq % slots) * slotBytes;
  unsigned char *copy = scratch + 16;
  size_t dataAt = 16 + (size_t)maxUpdates * sizeof(cudaGraphKernelNodeUpdate);
  if (count) {
    const unsigned long long *a = (const unsigned long long *)(slot + 16);
    unsigned long long *b = (unsigned long long *)(copy + 16);
    for (size_t i = threadIdx.x; i < count * sizeof(cudaGraphKernelNodeUpdate) / 8; i += blockDim.x) b[i] = a[i];
    const unsigned long long *c = (const unsigned long long *)(slot + dataAt);
    unsigned long long *d = (unsigned long long *)(copy + dataAt);
    for (size_t i = threadIdx.x; i < (dataBytes + 7) / 8; i += blockDim.x) d[i] = c[i];
    __syncthreads();
    cudaGraphKernelNodeUpdate *u = (cudaGraphKernelNodeUpdate *)(copy + 16);
    for (unsigned j = threadIdx.x; j < count; j += blockDim.x) {
      if (j > 0 && u[j].node == u[j - 1].node) continue;
      unsigned k = j;
      for (; k < count && u[k].node == u[j].node; ++k)
        if (u[k].field == cudaGraphKernelNodeFieldParam)
          u[k].updateData.param.pValue = copy + dataAt + (size_t)u[k].updateData.param.pValue;
      cudaError_t e = cudaGraphKernelNodeUpdatesApply(&u[j], k - j);
      if (e != cudaSuccess) {
        // The graph's nodes would run with stale values: say why, then fault.
        atomicCAS((unsigned long long *)(ring + 8), 0ull, (unsigned long long)e);
        __threadfence_system();
        __trap();
      }
    }
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    *launches = seq + 1;
    __threadfence_system();
    *(volatile unsigned long long *)ring = seq + 1;
  }
}
)";

std::string devrtPath() {
  std::vector<std::string> candidates;
  if (const char *v = std::getenv("HOSTJIT_CUDADEVRT"); v && *v) return v;
  std::string dir = nvrtcLibraryDirectory();
  if (!dir.empty()) {
    candidates.push_back(dir + "/libcudadevrt.a");
    candidates.push_back(dir + "/../lib64/libcudadevrt.a");
    candidates.push_back(dir + "/../lib/libcudadevrt.a");
  }
  if (const char *home = std::getenv("CUDA_HOME"); home && *home) candidates.push_back(std::string(home) + "/lib64/libcudadevrt.a");
  candidates.push_back("/usr/local/cuda/lib64/libcudadevrt.a");
  candidates.push_back("/usr/lib/x86_64-linux-gnu/libcudadevrt.a");
  for (const std::string &c : candidates)
    if (access(c.c_str(), R_OK) == 0) return c;
  return std::string();
}

}  // namespace

int32_t loadUpdater(const Driver &d, CudaModules &modules, int ccMajor, int ccMinor, CUfunction *fn) {
  if (!d.cuFuncGetParamInfo || !d.cuGraphUpload || !d.cuGraphKernelNodeGetAttribute || !d.cuLinkAddFile_v2 ||
      !d.cuMemHostAlloc || !d.cuMemHostGetDevicePointer_v2 || !d.cuMemFreeHost || !d.cuStreamQuery)
    return fail(HJ_ERR_NOT_FOUND, "the CUDA driver lacks the functions of device-updatable graph nodes (CUDA 12.4 or newer)");
  const char *key = "hostjit graph updater";
  if (auto it = modules.modules.find(key); it != modules.modules.end() && it->second)
    return d.cuModuleGetFunction(fn, it->second, "hostjit_apply_graph_updates") == CUDA_SUCCESS
               ? HJ_OK
               : fail(HJ_ERR_BACKEND, "the graph updater's module has no kernel");
  std::string devrt = devrtPath();
  if (devrt.empty())
    return fail(HJ_ERR_NOT_FOUND,
                "libcudadevrt.a not found (set HOSTJIT_CUDADEVRT, or CUDA_HOME to the toolkit's directory)");
  hj_kernel_desc desc{};
  desc.name = "hostjit_apply_graph_updates";
  desc.cuda_source = kUpdaterSource;
  desc.cuda_path = "<graph updater>";
  desc.cuda_entry = "hostjit_apply_graph_updates";
  desc.nvrtc_options = "-rdc=true";
  CudaImage image;
  if (int32_t st = compileCudaKernel(desc, ccMajor, ccMinor, false, image)) return st;
  bool ptx = image.data->compare(0, 4, "\x7f" "ELF") != 0;
  std::vector<char> log(8 << 10, '\0');
  CUjit_option opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *values[] = {log.data(), reinterpret_cast<void *>(static_cast<uintptr_t>(log.size() - 1))};
  CUlinkState state = nullptr;
  if (CUresult r = d.cuLinkCreate_v2(2, opts, values, &state))
    return fail(HJ_ERR_BACKEND, "cuLinkCreate failed for the graph updater: %s", describe(d, r).c_str());
  std::string text = *image.data;
  if (ptx) text.push_back('\0');
  CUresult r = d.cuLinkAddData_v2(state, ptx ? CU_JIT_INPUT_PTX : CU_JIT_INPUT_CUBIN, text.data(), text.size(),
                                  "graph_updater", 0, nullptr, nullptr);
  if (r == CUDA_SUCCESS) r = d.cuLinkAddFile_v2(state, CU_JIT_INPUT_LIBRARY, devrt.c_str(), 0, nullptr, nullptr);
  void *cubin = nullptr;
  size_t size = 0;
  if (r == CUDA_SUCCESS) r = d.cuLinkComplete(state, &cubin, &size);
  CUmodule mod = nullptr;
  if (r == CUDA_SUCCESS) r = d.cuModuleLoadData(&mod, cubin);
  d.cuLinkDestroy(state);
  if (r != CUDA_SUCCESS)
    return fail(HJ_ERR_BACKEND, "linking the graph updater with %s failed: %s%s%s", devrt.c_str(), describe(d, r).c_str(),
                log[0] ? "\n" : "", log.data());
  modules.modules[key] = mod;
  if (CUresult g = d.cuModuleGetFunction(fn, mod, "hostjit_apply_graph_updates"))
    return fail(HJ_ERR_BACKEND, "the graph updater's module has no kernel: %s", describe(d, g).c_str());
  return HJ_OK;
}

int32_t paramLayout(const Driver &d, CUfunction f, size_t numParams, ParamLayout &out) {
  out.offset.resize(numParams);
  out.size.resize(numParams);
  out.bytes = 0;
  for (size_t i = 0; i < numParams; ++i) {
    size_t offset = 0, size = 0;
    if (CUresult r = d.cuFuncGetParamInfo(f, i, &offset, &size))
      return fail(HJ_ERR_BACKEND, "cuFuncGetParamInfo failed for parameter %zu: %s", i, describe(d, r).c_str());
    out.offset[i] = static_cast<uint32_t>(offset);
    out.size[i] = static_cast<uint32_t>(size);
    out.bytes = std::max(out.bytes, static_cast<uint32_t>(offset + size));
  }
  return HJ_OK;
}

int32_t UpdateRing::make(const Driver &d, CUstream stream, uint32_t maxUpdates, uint32_t maxData,
                         std::unique_ptr<UpdateRing> &out) {
  std::unique_ptr<UpdateRing> ring(new UpdateRing(d, stream));
  ring->maxUpdates_ = maxUpdates;
  ring->maxData_ = (maxData + 7) & ~7u;
  ring->slotBytes_ = (kSlotHead + uint64_t{maxUpdates} * kUpdateBytes + ring->maxData_ + 63) & ~uint64_t{63};
  size_t bytes = kHeader + kSlots * ring->slotBytes_;
  void *host = nullptr;
  if (CUresult r = d.cuMemHostAlloc(&host, bytes, CU_MEMHOSTALLOC_DEVICEMAP))
    return fail(HJ_ERR_BACKEND, "cuMemHostAlloc of %zu bytes for graph updates failed: %s", bytes, describe(d, r).c_str());
  ring->host_ = static_cast<unsigned char *>(host);
  std::memset(host, 0, bytes);
  if (CUresult r = d.cuMemHostGetDevicePointer_v2(&ring->device_, host, 0))
    return fail(HJ_ERR_BACKEND, "cuMemHostGetDevicePointer failed: %s", describe(d, r).c_str());
  size_t scratch = 16 + ring->slotBytes_;
  if (CUresult r = d.cuMemAlloc_v2(&ring->scratch_, scratch))
    return fail(HJ_ERR_BACKEND, "cuMemAlloc of %zu bytes for graph updates failed: %s", scratch, describe(d, r).c_str());
  if (CUresult r = d.cuMemsetD8Async(ring->scratch_, 0, 16, stream))
    return fail(HJ_ERR_BACKEND, "cuMemsetD8Async failed: %s", describe(d, r).c_str());
  ring->maxUpdatesArg_ = maxUpdates;
  ring->args_[0] = &ring->device_;
  ring->args_[1] = &ring->slotBytes_;
  ring->args_[2] = &ring->slotsArg_;
  ring->args_[3] = &ring->maxUpdatesArg_;
  ring->args_[4] = &ring->scratch_;
  out = std::move(ring);
  return HJ_OK;
}

UpdateRing::~UpdateRing() {
  // The graph that launches the updater is destroyed first; its launches
  // are complete when the stream is (cuGraphExecDestroy does not wait).
  if (stream_) d_.cuStreamSynchronize(stream_);
  if (scratch_) d_.cuMemFree_v2(scratch_);
  if (host_) d_.cuMemFreeHost(host_);
}

bool UpdateRing::room(uint32_t bytes) const {
  return count_ + 2 <= maxUpdates_ && data_ + ((bytes + 7) & ~7u) <= maxData_;
}

int32_t UpdateRing::acquire() {
  if (acquired_) return HJ_OK;
  const volatile uint64_t *consumed = reinterpret_cast<const volatile uint64_t *>(host_);
  if (launch_ - *consumed >= kBehind) behind_ = true;
  while (launch_ - *consumed >= kSlots) {
    CUresult r = d_.cuStreamQuery(stream_);
    if (r == CUDA_SUCCESS) {
      if (launch_ - *consumed >= kSlots)
        return fail(HJ_ERR_BACKEND, "graph updates: the updater of launch %llu did not run",
                    static_cast<unsigned long long>(launch_ - kSlots));
      break;
    }
    if (r != CUDA_ERROR_NOT_READY)
      return fail(HJ_ERR_BACKEND, "graph updates: waiting for a free slot: %s", describe(d_, r).c_str());
    sched_yield();
  }
  acquired_ = true;
  count_ = data_ = 0;
  return HJ_OK;
}

int32_t UpdateRing::grid(CUgraphDeviceNode node, const hj_dim3 &g) {
  if (int32_t st = acquire()) return st;
  unsigned char *u = slot(launch_) + kSlotHead + size_t{count_++} * kUpdateBytes;
  std::memset(u, 0, kUpdateBytes);
  std::memcpy(u, &node, sizeof node);
  int32_t field = 1;  // cudaGraphKernelNodeFieldGridDim
  std::memcpy(u + 8, &field, sizeof field);
  uint32_t dims[3] = {g.x, g.y, g.z};
  std::memcpy(u + 16, dims, sizeof dims);
  return HJ_OK;
}

int32_t UpdateRing::param(CUgraphDeviceNode node, uint32_t bytes, unsigned char **data) {
  if (int32_t st = acquire()) return st;
  if (bytes == 0) {  // a kernel without parameters: nothing to apply
    *data = nullptr;
    return HJ_OK;
  }
  unsigned char *s = slot(launch_);
  unsigned char *u = s + kSlotHead + size_t{count_++} * kUpdateBytes;
  std::memset(u, 0, kUpdateBytes);
  std::memcpy(u, &node, sizeof node);
  int32_t field = 2;  // cudaGraphKernelNodeFieldParam
  std::memcpy(u + 8, &field, sizeof field);
  uint64_t where[3] = {data_, 0, bytes};  // pValue: an offset into the data until the updater points it
  std::memcpy(u + 16, where, sizeof where);
  *data = s + kSlotHead + size_t{maxUpdates_} * kUpdateBytes + data_;
  data_ += (bytes + 7) & ~7u;
  return HJ_OK;
}

int32_t UpdateRing::failed() const {
  if (uint64_t e = *reinterpret_cast<const volatile uint64_t *>(host_ + 8))
    return fail(HJ_ERR_BACKEND, "a graph node update applied on the device failed with cudaError_t %llu",
                static_cast<unsigned long long>(e));
  return HJ_OK;
}

int32_t UpdateRing::drain() {
  const volatile uint64_t *consumed = reinterpret_cast<const volatile uint64_t *>(host_);
  while (*consumed < launch_) {
    CUresult r = d_.cuStreamQuery(stream_);
    if (r == CUDA_SUCCESS) {
      if (*consumed < launch_) return fail(HJ_ERR_BACKEND, "graph updates: an updater of this graph did not run");
      break;
    }
    if (r != CUDA_ERROR_NOT_READY)
      return fail(HJ_ERR_BACKEND, "graph updates: waiting for the updater: %s", describe(d_, r).c_str());
    sched_yield();
  }
  return failed();
}

int32_t UpdateRing::post() {
  if (int32_t st = failed()) return st;
  if (!acquired_) return HJ_OK;
  unsigned char *s = slot(launch_);
  uint32_t head[2] = {count_, data_};
  std::memcpy(s + 8, head, sizeof head);
  std::atomic_thread_fence(std::memory_order_release);
  uint64_t tag = launch_ + 1;
  std::memcpy(s, &tag, sizeof tag);
  return HJ_OK;
}

void UpdateRing::launched() {
  ++launch_;
  ++generation_;
  acquired_ = false;
  count_ = data_ = 0;
}

void UpdateRing::discard() {
  if (acquired_) std::memset(slot(launch_), 0, kSlotHead);
  ++generation_;
  acquired_ = false;
  count_ = data_ = 0;
}

}  // namespace hj

#endif  // HOSTJIT_HAVE_NVRTC
