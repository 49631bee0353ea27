// graph_device_update_probe.cu - whether a graph's kernel nodes can take
// new arguments and grids from a kernel at the graph's root (device-updatable
// nodes, cudaGraphKernelNodeUpdatesApply) for less host time than
// cuGraphExecKernelNodeSetParams, and whether the updates reach the nodes of
// the same launch. The updater is compiled with NVRTC (-rdc) and linked with
// libcudadevrt by cuLink, the way the runtime would. Standalone, on a GPU
// machine:
//   nvcc -O2 -o graph_device_update_probe graph_device_update_probe.cu -lcuda -lnvrtc
//   ./graph_device_update_probe /usr/local/cuda/lib64/libcudadevrt.a
#include <cuda.h>
#include <nvrtc.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#define CK(x) do { CUresult r_ = (x); if (r_) { const char *s_; cuGetErrorString(r_, &s_); printf("%s:%d %s: %s\n", __FILE__, __LINE__, #x, s_); exit(1); } } while (0)

static const char *kSource = R"(
#include <cuda_device_runtime_api.h>
// pValue holds an offset into data until the updater points it at a copy.
struct Slot { unsigned int count, dataBytes; cudaGraphKernelNodeUpdate u[256]; unsigned char data[256 * 16]; };
struct Ring { volatile unsigned long long consumed; unsigned long long pad[7]; Slot slots[64]; };
__device__ void finish(Ring *ring, unsigned long long *launches, unsigned long long seq, Slot *s) {
  for (unsigned i = 0; i < s->count; ++i)
    if (s->u[i].field == cudaGraphKernelNodeFieldParam)
      s->u[i].updateData.param.pValue = s->data + (size_t)s->u[i].updateData.param.pValue;
  if (s->count) cudaGraphKernelNodeUpdatesApply(s->u, s->count);
  *launches = seq + 1;
  __threadfence_system();
  ring->consumed = seq + 1;
}
// Applies the updates where the host wrote them (mapped host memory).
extern "C" __global__ void apply_host(Ring *ring, unsigned long long *launches, Slot *scratch) {
  if (threadIdx.x) return;
  unsigned long long seq = *launches;
  Slot *s = &ring->slots[seq % 64];
  // copy-free: fix the pointers in place (host memory)
  finish(ring, launches, seq, s);
}
__device__ void copyIn(Ring *ring, unsigned long long *launches, Slot *to, unsigned long long &seqOut) {
  __shared__ unsigned long long seq;
  if (threadIdx.x == 0) seq = *launches;
  __syncthreads();
  const Slot *s = &ring->slots[seq % 64];
  unsigned count = s->count, data = s->dataBytes;
  size_t head = (8 + count * sizeof(cudaGraphKernelNodeUpdate)) / 8;
  const uint2 *a = (const uint2 *)s; uint2 *b = (uint2 *)to;
  for (size_t i = threadIdx.x; i < head; i += blockDim.x) b[i] = a[i];
  const uint2 *c = (const uint2 *)s->data; uint2 *d = (uint2 *)to->data;
  for (size_t i = threadIdx.x; i < (data + 7) / 8; i += blockDim.x) d[i] = c[i];
  __syncthreads();
  seqOut = seq;
}
extern "C" __global__ void apply_shared(Ring *ring, unsigned long long *launches, Slot *scratch) {
  __shared__ __align__(16) unsigned char copy[sizeof(Slot)];
  unsigned long long seq;
  copyIn(ring, launches, (Slot *)copy, seq);
  if (threadIdx.x == 0) finish(ring, launches, seq, (Slot *)copy);
}
extern "C" __global__ void apply_global(Ring *ring, unsigned long long *launches, Slot *scratch) {
  unsigned long long seq;
  copyIn(ring, launches, scratch, seq);
  __threadfence_block();
  if (threadIdx.x == 0) finish(ring, launches, seq, scratch);
}
// Updates applied by many threads, one node's updates (consecutive) each.
extern "C" __global__ void apply_parallel(Ring *ring, unsigned long long *launches, Slot *scratch) {
  __shared__ __align__(16) unsigned char copy[sizeof(Slot)];
  unsigned long long seq;
  Slot *s = (Slot *)copy;
  copyIn(ring, launches, s, seq);
  for (unsigned j = threadIdx.x; j < s->count; j += blockDim.x) {
    if (j > 0 && s->u[j].node == s->u[j - 1].node) continue;
    unsigned k = j;
    for (; k < s->count && s->u[k].node == s->u[j].node; ++k)
      if (s->u[k].field == cudaGraphKernelNodeFieldParam)
        s->u[k].updateData.param.pValue = s->data + (size_t)s->u[k].updateData.param.pValue;
    cudaGraphKernelNodeUpdatesApply(&s->u[j], k - j);
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    *launches = seq + 1;
    __threadfence_system();
    ring->consumed = seq + 1;
  }
}
extern "C" __global__ void k(float *out, long long i, float v) {
  if (threadIdx.x == 0 && blockIdx.x == 0) out[i] = v * gridDim.x;
}
)";

struct Update { CUgraphDeviceNode node; int field; int pad; union { unsigned int grid[3]; struct { const void *p; size_t off, size; } param; } d; };
struct Slot { unsigned int count, dataBytes; Update u[256]; unsigned char data[256 * 16]; };
struct Ring { volatile unsigned long long consumed; unsigned long long pad[7]; Slot slots[64]; };

int main(int argc, char **argv) {
  setvbuf(stdout, nullptr, _IONBF, 0);
  const char *devrt = argc > 1 ? argv[1] : "/usr/local/cuda/lib64/libcudadevrt.a";
  CK(cuInit(0)); CUdevice dev; CK(cuDeviceGet(&dev, 0)); CUcontext ctx; CK(cuDevicePrimaryCtxRetain(&ctx, dev)); CK(cuCtxSetCurrent(ctx));
  int major, minor; cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
  cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
  static_assert(sizeof(Update) == 40, "cudaGraphKernelNodeUpdate layout");
  nvrtcProgram prog; nvrtcCreateProgram(&prog, kSource, "probe.cu", 0, nullptr, nullptr);
  std::string arch = "--gpu-architecture=sm_" + std::to_string(major * 10 + minor);
  const char *opts[] = {arch.c_str(), "-rdc=true", "-I/usr/local/cuda/include", "-std=c++17"};
  auto a0 = std::chrono::steady_clock::now();
  nvrtcResult nr = nvrtcCompileProgram(prog, 4, opts);
  size_t logn; nvrtcGetProgramLogSize(prog, &logn); std::string log(logn, 0); nvrtcGetProgramLog(prog, log.data());
  if (nr) { printf("nvrtc: %s\n%s\n", nvrtcGetErrorString(nr), log.c_str()); return 1; }
  size_t cubinn; nvrtcGetCUBINSize(prog, &cubinn); std::vector<char> cubin(cubinn); nvrtcGetCUBIN(prog, cubin.data());
  CUlinkState ls; CK(cuLinkCreate(0, nullptr, nullptr, &ls));
  CK(cuLinkAddData(ls, CU_JIT_INPUT_CUBIN, cubin.data(), cubin.size(), "probe.cubin", 0, nullptr, nullptr));
  CK(cuLinkAddFile(ls, CU_JIT_INPUT_LIBRARY, devrt, 0, nullptr, nullptr));
  void *linked; size_t linkedn; CK(cuLinkComplete(ls, &linked, &linkedn));
  CUmodule m; CK(cuModuleLoadData(&m, linked)); CK(cuLinkDestroy(ls));
  auto a1 = std::chrono::steady_clock::now();
  printf("compile + link + load of the updater: %.1f ms\n", std::chrono::duration<double, std::milli>(a1 - a0).count());
  CUfunction fk; CK(cuModuleGetFunction(&fk, m, "k"));
  size_t off[3], sz[3];
  for (int i = 0; i < 3; ++i) CK(cuFuncGetParamInfo(fk, i, &off[i], &sz[i]));
  printf("k params: (%zu,%zu) (%zu,%zu) (%zu,%zu)\n", off[0], sz[0], off[1], sz[1], off[2], sz[2]);

  CUstream s; CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  Ring *ring; CK(cuMemHostAlloc((void **)&ring, sizeof(Ring), CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE));
  memset(ring, 0, sizeof(Ring));
  CUdeviceptr ringDev; CK(cuMemHostGetDevicePointer(&ringDev, ring, 0));
  CUdeviceptr launches; CK(cuMemAlloc(&launches, 8)); CK(cuMemsetD8(launches, 0, 8));
  CUdeviceptr scratch; CK(cuMemAlloc(&scratch, sizeof(Slot)));
  CUdeviceptr out; CK(cuMemAlloc(&out, 4096)); CK(cuMemsetD8(out, 0, 4096));
  float *outHost; CK(cuMemAllocHost((void **)&outHost, 4096));
  unsigned long long seq = 0;  // launches of updater graphs, as the device counts them
  auto wait = [&]() {
    for (long spins = 0; seq - ring->consumed >= 64; ++spins)
      if (spins > 2000000000L) { printf("stuck: consumed %llu, launched %llu\n", ring->consumed, seq); exit(1); }
  };
  CUevent ea, eb; CK(cuEventCreate(&ea, 0)); CK(cuEventCreate(&eb, 0));

  for (int N : {16, 64}) {
    std::vector<CUdeviceptr> outs(N, out); std::vector<long long> idx(N); std::vector<float> vs(N, 1.f);
    std::vector<void *> args(3 * N);
    for (int i = 0; i < N; ++i) { idx[i] = i; args[3 * i] = &outs[i]; args[3 * i + 1] = &idx[i]; args[3 * i + 2] = &vs[i]; }
    CUDA_KERNEL_NODE_PARAMS p{}; p.func = fk; p.gridDimX = 4; p.gridDimY = p.gridDimZ = 1; p.blockDimX = 128; p.blockDimY = p.blockDimZ = 1;
    auto time = [&](const char *what, auto &&body) {
      std::vector<double> us;
      for (int rep = 0; rep < 30; ++rep) {
        CK(cuStreamSynchronize(s));
        auto a = std::chrono::steady_clock::now();
        for (int it = 0; it < 32; ++it) body(rep * 32 + it);
        auto b = std::chrono::steady_clock::now();
        us.push_back(std::chrono::duration<double, std::micro>(b - a).count() / 32);
      }
      std::sort(us.begin(), us.end());
      printf("N=%-3d %-64s %8.2f us per call (median)\n", N, what, us[us.size() / 2]);
    };
    auto gpu = [&](const char *what, auto &&body) {
      CK(cuStreamSynchronize(s));
      CK(cuEventRecord(ea, s));
      for (int it = 0; it < 200; ++it) body(it);
      CK(cuEventRecord(eb, s)); CK(cuEventSynchronize(eb));
      float ms; cuEventElapsedTime(&ms, ea, eb);
      printf("N=%-3d %-64s %8.2f us of GPU time per execution\n", N, what, ms * 1000 / 200);
    };
    // The plain graph: N chained kernel nodes.
    CUgraph g0; CK(cuGraphCreate(&g0, 0));
    std::vector<CUgraphNode> n0(N);
    for (int i = 0; i < N; ++i) {
      p.kernelParams = &args[3 * i];
      CK(cuGraphAddKernelNode(&n0[i], g0, i ? &n0[i - 1] : nullptr, i ? 1 : 0, &p));
    }
    CUgraphExec e0; CK(cuGraphInstantiate(&e0, g0, 0));
    time("plain graph, launch only", [&](int) { CK(cuGraphLaunch(e0, s)); });
    time("plain graph, host arg updates of every node + launch", [&](int it) {
      for (int i = 0; i < N; ++i) { vs[i] = float(1 + (it + i) % 13); p.gridDimX = 4; p.kernelParams = &args[3 * i]; CK(cuGraphExecKernelNodeSetParams(e0, n0[i], &p)); }
      CK(cuGraphLaunch(e0, s)); });
    time("plain graph, host grid+arg updates of every node + launch", [&](int it) {
      for (int i = 0; i < N; ++i) { vs[i] = float(1 + (it + i) % 13); p.gridDimX = 1 + (it + i) % 97; p.kernelParams = &args[3 * i]; CK(cuGraphExecKernelNodeSetParams(e0, n0[i], &p)); }
      CK(cuGraphLaunch(e0, s)); });
    p.gridDimX = 4;
    for (int i = 0; i < N; ++i) { vs[i] = 1.f; p.kernelParams = &args[3 * i]; CK(cuGraphExecKernelNodeSetParams(e0, n0[i], &p)); }
    gpu("plain graph", [&](int) { CK(cuGraphLaunch(e0, s)); });

    for (const char *variant : {"apply_host", "apply_shared", "apply_global", "apply_parallel"}) {
      // The same nodes, device-updatable, behind the updater.
      CUfunction fapply; CK(cuModuleGetFunction(&fapply, m, variant));
      CUgraph g1; CK(cuGraphCreate(&g1, 0));
      std::vector<CUgraphNode> n1(N); std::vector<CUgraphDeviceNode> dn(N);
      CUgraphNode root;
      void *rargs[] = {&ringDev, &launches, &scratch};
      CUDA_KERNEL_NODE_PARAMS rp{}; rp.func = fapply; rp.gridDimX = rp.gridDimY = rp.gridDimZ = 1; rp.blockDimX = 128; rp.blockDimY = rp.blockDimZ = 1; rp.kernelParams = rargs;
      CK(cuGraphAddKernelNode(&root, g1, nullptr, 0, &rp));
      p.gridDimX = 4;
      for (int i = 0; i < N; ++i) {
        vs[i] = 1.f;
        p.kernelParams = &args[3 * i];
        CK(cuGraphAddKernelNode(&n1[i], g1, i ? &n1[i - 1] : &root, 1, &p));
        CUkernelNodeAttrValue v{}; v.deviceUpdatableKernelNode.deviceUpdatable = 1;
        CK(cuGraphKernelNodeSetAttribute(n1[i], CU_LAUNCH_ATTRIBUTE_DEVICE_UPDATABLE_KERNEL_NODE, &v));
        CUkernelNodeAttrValue got{};
        CK(cuGraphKernelNodeGetAttribute(n1[i], CU_LAUNCH_ATTRIBUTE_DEVICE_UPDATABLE_KERNEL_NODE, &got));
        dn[i] = got.deviceUpdatableKernelNode.devNode;
      }
      CUgraphExec e1;
      auto u0 = std::chrono::steady_clock::now();
      CK(cuGraphInstantiate(&e1, g1, 0));
      auto u1 = std::chrono::steady_clock::now();
      CK(cuGraphUpload(e1, s)); CK(cuStreamSynchronize(s));
      auto u2 = std::chrono::steady_clock::now();
      printf("N=%d %s: instantiate %.1f us, upload %.1f us\n", N, variant, std::chrono::duration<double, std::micro>(u1 - u0).count(),
             std::chrono::duration<double, std::micro>(u2 - u1).count());
      auto post = [&](int it, bool grids) {
        wait();
        Slot &sl = ring->slots[seq % 64];
        unsigned c = 0;
        for (int i = 0; i < N; ++i) {
          float v = float(1 + (it + i) % 13);
          memcpy(&sl.data[16 * i], &v, 4);
          Update &u = sl.u[c++]; u.node = dn[i]; u.field = 2;
          u.d.param.p = (const void *)(uintptr_t)(16 * i); u.d.param.off = off[2]; u.d.param.size = 4;
          if (grids) { Update &g = sl.u[c++]; g.node = dn[i]; g.field = 1; g.d.grid[0] = 1 + (it + i) % 97; g.d.grid[1] = g.d.grid[2] = 1; }
        }
        sl.count = c;
        sl.dataBytes = 16 * N;
        CK(cuGraphLaunch(e1, s));
        ++seq;
      };
      auto none = [&](int) { wait(); ring->slots[seq % 64].count = 0; CK(cuGraphLaunch(e1, s)); ++seq; };
      // Correctness: every node of the launch sees its update.
      int bad = 0;
      for (int it = 0; it < 200; ++it) {
        bool grids = it % 2;
        post(it, grids);
        CK(cuMemcpyDtoHAsync(outHost, out, 4 * N, s)); CK(cuStreamSynchronize(s));
        for (int i = 0; i < N; ++i) {
          float want = float(1 + (it + i) % 13) * (grids ? 1 + (it + i) % 97 : float(it ? 1 + (it - 1 + i) % 97 : 4));
          if (outHost[i] != want && bad++ < 5) printf("  call %d node %d: %g, want %g\n", it, i, outHost[i], want);
        }
      }
      printf("N=%d %s: device updates reached the same launch in 200 calls: %s (%d wrong)\n", N, variant, bad ? "NO" : "yes", bad);
      time("updater graph, no update, launch", none);
      time("updater graph, device arg updates of every node + launch", [&](int it) { post(it, false); });
      time("updater graph, device grid+arg updates of every node + launch", [&](int it) { post(it, true); });
      gpu("updater graph, no update", none);
      gpu("updater graph, device arg updates", [&](int it) { post(it, false); });
      gpu("updater graph, device grid+arg updates", [&](int it) { post(it, true); });
      if (!strcmp(variant, "apply_host")) {
        time("updater graph, host arg updates + upload + launch", [&](int it) {
          for (int i = 0; i < N; ++i) { vs[i] = float(1 + (it + i) % 13); p.gridDimX = 4; p.kernelParams = &args[3 * i]; CK(cuGraphExecKernelNodeSetParams(e1, n1[i], &p)); }
          wait(); ring->slots[seq % 64].count = 0;
          CK(cuGraphUpload(e1, s)); CK(cuGraphLaunch(e1, s)); ++seq; });
      }
      CK(cuStreamSynchronize(s));
      CK(cuGraphExecDestroy(e1)); CK(cuGraphDestroy(g1));
    }
    CK(cuGraphExecDestroy(e0)); CK(cuGraphDestroy(g0));
  }

  // Whether host updates put back values the device gave a node: A and B
  // device-updatable behind apply_host, then a memset node M. A is given
  // v = 5 on the device; then M a new size by the host; then B new
  // arguments by the host (and the graph uploaded again).
  {
    CK(cuStreamSynchronize(s));
    CUfunction fapply; CK(cuModuleGetFunction(&fapply, m, "apply_host"));
    CUgraph g; CK(cuGraphCreate(&g, 0));
    void *rargs[] = {&ringDev, &launches, &scratch};
    CUDA_KERNEL_NODE_PARAMS rp{}; rp.func = fapply; rp.gridDimX = rp.gridDimY = rp.gridDimZ = 1; rp.blockDimX = 128; rp.blockDimY = rp.blockDimZ = 1; rp.kernelParams = rargs;
    CUgraphNode root, na, nb, nm;
    CK(cuGraphAddKernelNode(&root, g, nullptr, 0, &rp));
    CUdeviceptr o = out; long long ia = 0, ib = 1; float va = 1.f, vb = 1.f;
    void *aa[] = {&o, &ia, &va}, *ab[] = {&o, &ib, &vb};
    CUDA_KERNEL_NODE_PARAMS p{}; p.func = fk; p.gridDimX = 4; p.gridDimY = p.gridDimZ = 1; p.blockDimX = 128; p.blockDimY = p.blockDimZ = 1;
    p.kernelParams = aa; CK(cuGraphAddKernelNode(&na, g, &root, 1, &p));
    p.kernelParams = ab; CK(cuGraphAddKernelNode(&nb, g, &na, 1, &p));
    CUDA_MEMSET_NODE_PARAMS mp{}; mp.dst = out + 1024; mp.elementSize = 1; mp.width = 64; mp.height = 1; mp.value = 7;
    CK(cuGraphAddMemsetNode(&nm, g, &nb, 1, &mp, ctx));
    CUgraphDeviceNode da, db;
    for (auto [n, d] : {std::pair{na, &da}, std::pair{nb, &db}}) {
      CUkernelNodeAttrValue v{}; v.deviceUpdatableKernelNode.deviceUpdatable = 1;
      CK(cuGraphKernelNodeSetAttribute(n, CU_LAUNCH_ATTRIBUTE_DEVICE_UPDATABLE_KERNEL_NODE, &v));
      CUkernelNodeAttrValue got{}; CK(cuGraphKernelNodeGetAttribute(n, CU_LAUNCH_ATTRIBUTE_DEVICE_UPDATABLE_KERNEL_NODE, &got));
      *d = got.deviceUpdatableKernelNode.devNode;
    }
    CUgraphExec e; CK(cuGraphInstantiate(&e, g, 0)); CK(cuGraphUpload(e, s));
    auto launchAndRead = [&](bool postA, const char *what) {
      wait();
      Slot &sl = ring->slots[seq % 64];
      sl.count = 0;
      if (postA) {
        float v = 5.f; memcpy(sl.data, &v, 4);
        Update &u = sl.u[sl.count++]; u.node = da; u.field = 2; u.d.param.p = nullptr; u.d.param.off = off[2]; u.d.param.size = 4;
        sl.dataBytes = 16;
      }
      CK(cuGraphLaunch(e, s)); ++seq;
      CK(cuMemcpyDtoHAsync(outHost, out, 8, s)); CK(cuStreamSynchronize(s));
      printf("host-update question, %-58s A = %g (device-given 20, built 4), B = %g\n", what, outHost[0], outHost[1]);
    };
    launchAndRead(true, "A given v = 5 on the device:");
    launchAndRead(false, "a launch with no update:");
    mp.width = 512; CK(cuGraphExecMemsetNodeSetParams(e, nm, &mp, ctx));
    launchAndRead(false, "M given a new size by the host:");
    vb = 7.f; p.kernelParams = ab; CK(cuGraphExecKernelNodeSetParams(e, nb, &p)); CK(cuGraphUpload(e, s));
    launchAndRead(false, "B given v = 7 by the host, uploaded:");
    CK(cuGraphExecDestroy(e)); CK(cuGraphDestroy(g));
  }
  return 0;
}
