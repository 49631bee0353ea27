// graph_update_probe.cu - what the CUDA driver charges the host for graph
// updates: cuGraphExecKernelNodeSetParams when only arguments change and
// when grids change, cuGraphExecUpdate, instantiation, and launching one of
// 1,000 executable graphs; the numbers behind graph mode's choice of graph
// for a new signature (docs/graph-mode.md, bench/RESULTS.md). Standalone,
// on a GPU machine:
//   nvcc -O2 -cubin -arch=sm_90 -o graph_update_probe.cubin graph_update_probe.cu
//   nvcc -O2 -o graph_update_probe graph_update_probe.cu -lcuda && ./graph_update_probe
#include <cuda.h>
#include <chrono>
#include <cstdio>
#include <vector>
#include <algorithm>
extern "C" __global__ void k(float *x, long long n) {}
#define CK(x) do { CUresult r = (x); if (r) { const char *s; cuGetErrorString(r, &s); printf("%s: %s\n", #x, s); return 1; } } while (0)
int main() {
  cuInit(0); CUdevice dev; cuDeviceGet(&dev, 0); CUcontext ctx; cuDevicePrimaryCtxRetain(&ctx, dev); cuCtxSetCurrent(ctx);
  CUmodule m; CUfunction f;
  CK(cuModuleLoad(&m, "graph_update_probe.cubin")); CK(cuModuleGetFunction(&f, m, "k"));
  CUstream s; cuStreamCreate(&s, CU_STREAM_NON_BLOCKING);
  CUdeviceptr buf; cuMemAlloc(&buf, 1 << 24);
  const int N = 16;
  std::vector<long long> ns(N, 1000); std::vector<CUdeviceptr> ptrs(N, buf);
  std::vector<void *> args(2 * N);
  CUgraph g; cuGraphCreate(&g, 0);
  std::vector<CUgraphNode> nodes(N);
  CUDA_KERNEL_NODE_PARAMS p{};
  for (int i = 0; i < N; ++i) {
    args[2 * i] = &ptrs[i]; args[2 * i + 1] = &ns[i];
    p.func = f; p.gridDimX = 4; p.gridDimY = p.gridDimZ = 1; p.blockDimX = 256; p.blockDimY = p.blockDimZ = 1;
    p.kernelParams = &args[2 * i];
    CK(cuGraphAddKernelNode(&nodes[i], g, i ? &nodes[i - 1] : nullptr, i ? 1 : 0, &p));
  }
  CUgraphExec e; CK(cuGraphInstantiate(&e, g, 0));
  auto time = [&](const char *what, auto &&body) {
    std::vector<double> us;
    for (int rep = 0; rep < 30; ++rep) {
      cuStreamSynchronize(s);
      auto a = std::chrono::steady_clock::now();
      for (int it = 0; it < 64; ++it) body(rep * 64 + it);
      auto b = std::chrono::steady_clock::now();
      us.push_back(std::chrono::duration<double, std::micro>(b - a).count() / 64);
    }
    std::sort(us.begin(), us.end());
    printf("%-50s %8.2f us per call (median)\n", what, us[us.size() / 2]);
  };
  time("launch only", [&](int) { cuGraphLaunch(e, s); });
  time("16 updates, arguments only, + launch", [&](int it) {
    for (int i = 0; i < N; ++i) { ns[i] = 1000 + it % 7; p.gridDimX = 4; p.kernelParams = &args[2 * i]; cuGraphExecKernelNodeSetParams(e, nodes[i], &p); }
    cuGraphLaunch(e, s); });
  time("16 updates, grid changes, + launch", [&](int it) {
    for (int i = 0; i < N; ++i) { ns[i] = 1000 + it % 7; p.gridDimX = 1 + it % 97; p.kernelParams = &args[2 * i]; cuGraphExecKernelNodeSetParams(e, nodes[i], &p); }
    cuGraphLaunch(e, s); });
  time("16 updates, grid changes, no launch", [&](int it) {
    for (int i = 0; i < N; ++i) { ns[i] = 1000 + it % 7; p.gridDimX = 1 + it % 97; p.kernelParams = &args[2 * i]; cuGraphExecKernelNodeSetParams(e, nodes[i], &p); }
  });
  time("16 updates, arguments only, no launch", [&](int it) {
    for (int i = 0; i < N; ++i) { ns[i] = 1000 + it % 7; p.gridDimX = 4; p.kernelParams = &args[2 * i]; cuGraphExecKernelNodeSetParams(e, nodes[i], &p); }
  });
  for (int changed : {1, 4, 8}) {
    char what[80]; snprintf(what, sizeof what, "grid changes in %d of 16 nodes, + launch", changed);
    time(what, [&](int it) {
      for (int i = 0; i < N; ++i) { ns[i] = 1000 + it % 7; p.gridDimX = i < changed ? 1 + it % 97 : 4; p.kernelParams = &args[2 * i]; cuGraphExecKernelNodeSetParams(e, nodes[i], &p); }
      cuGraphLaunch(e, s); });
  }
  time("16 updates, grid alternates 4/5, + launch", [&](int it) {
    for (int i = 0; i < N; ++i) { p.gridDimX = 4 + it % 2; p.kernelParams = &args[2 * i]; cuGraphExecKernelNodeSetParams(e, nodes[i], &p); }
    cuGraphLaunch(e, s); });
  time("16 updates, grid grows slowly (+1 per 64 calls), + launch", [&](int it) {
    for (int i = 0; i < N; ++i) { p.gridDimX = 1 + it / 64; p.kernelParams = &args[2 * i]; cuGraphExecKernelNodeSetParams(e, nodes[i], &p); }
    cuGraphLaunch(e, s); });
  time("16 updates, grid changes, upload, launch", [&](int it) {
    for (int i = 0; i < N; ++i) { p.gridDimX = 1 + it % 97; p.kernelParams = &args[2 * i]; cuGraphExecKernelNodeSetParams(e, nodes[i], &p); }
    cuGraphUpload(e, s); cuGraphLaunch(e, s); });
  {
    // Grids that change but stay below 4: do small grids cost less?
    time("16 updates, grid in 1..3, + launch", [&](int it) {
      for (int i = 0; i < N; ++i) { p.gridDimX = 1 + it % 3; p.kernelParams = &args[2 * i]; cuGraphExecKernelNodeSetParams(e, nodes[i], &p); }
      cuGraphLaunch(e, s); });
  }
  time("cuGraphKernelNodeSetParams x16 + cuGraphExecUpdate + launch", [&](int it) {
    for (int i = 0; i < N; ++i) { ns[i] = 1000 + it % 7; p.gridDimX = 1 + it % 97; p.kernelParams = &args[2 * i]; cuGraphKernelNodeSetParams(nodes[i], &p); }
    CUgraphExecUpdateResultInfo info; cuGraphExecUpdate(e, g, &info); cuGraphLaunch(e, s); });
  time("16 eager cuLaunchKernel", [&](int it) {
    for (int i = 0; i < N; ++i) { ns[i] = 1000 + it % 7; cuLaunchKernel(f, 1 + it % 97, 1, 1, 256, 1, 1, 0, s, &args[2 * i], nullptr); } });
  time("instantiate + launch + destroy", [&](int it) {
    CUgraphExec e2; cuGraphInstantiate(&e2, g, 0); cuGraphLaunch(e2, s); cuGraphExecDestroy(e2); });
  {
    // 1000 executable graphs of the 16-node graph, each with its own grids:
    // device memory, instantiation time, and replays cycling through them.
    size_t free0, total; cuStreamSynchronize(s); cuMemGetInfo(&free0, &total);
    std::vector<CUgraphExec> execs(1000);
    auto a = std::chrono::steady_clock::now();
    for (int j = 0; j < 1000; ++j) {
      for (int i = 0; i < N; ++i) { p.gridDimX = 1 + j; p.kernelParams = &args[2 * i]; cuGraphKernelNodeSetParams(nodes[i], &p); }
      CK(cuGraphInstantiate(&execs[j], g, 0));
    }
    auto b = std::chrono::steady_clock::now();
    size_t free1; cuMemGetInfo(&free1, &total);
    printf("1000 execs: %.1f us each to instantiate, %.1f KiB of device memory each\n",
           std::chrono::duration<double, std::micro>(b - a).count() / 1000, (double(free0) - double(free1)) / 1000 / 1024);
    time("launch of exec j (cycling 1000)", [&](int it) { cuGraphLaunch(execs[(it * 617) % 1000], s); });
    time("16 arg updates + launch of exec j (cycling 1000)", [&](int it) {
      CUgraphExec x = execs[(it * 617) % 1000];
      for (int i = 0; i < N; ++i) { ns[i] = 1000 + it % 7; p.gridDimX = 1 + (it * 617) % 1000; p.kernelParams = &args[2 * i]; cuGraphExecKernelNodeSetParams(x, nodes[i], &p); }
      cuGraphLaunch(x, s); });
    for (auto x : execs) cuGraphExecDestroy(x);
  }
  cuStreamSynchronize(s);
  return 0;
}
