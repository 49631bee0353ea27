// cuda_graph.h - a CUDA graph of graph mode's nodes: kernels, memsets
// (fills), and collectives and library calls as child graphs captured from
// the communicator's and the library's calls.
#pragma once

#ifdef HOSTJIT_HAVE_NVRTC

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "cuda/cuda_driver.h"
#include "cuda/device_updates.h"

namespace hj {

// Queues a library call (its pointers set) on a stream being captured.
using LibraryCall = std::function<int32_t(const MatmulCall &, CUstream, uint32_t programStream)>;

// What a graph whose kernel nodes the device updates needs: the updater
// kernel, and the parameter layout of a kernel (NULL: its nodes are updated
// by the host). Both outlive the graph.
struct DeviceUpdateKit {
  CUfunction updater = nullptr;
  std::function<const ParamLayout *(const KernelEntry &)> layout;
};

// Builds and instantiates the graph of `nodes`, launched on `stream`.
// onFault turns a sticky error (the device faulted) into the backend's;
// library makes the calls of Library nodes, captured (it must outlive the
// graph). With `kit`, the kernel nodes that can be (neither cooperative nor
// clustered) are device-updatable behind an updater node at the root, and
// update() posts their new arguments and grids for the next launch; a node
// whose block or shared memory changes is updated by the host, and the
// graph uploaded again before its launch. When the pinned slots cannot be
// had, the graph is built without (Graph::deviceUpdates() says which).
int32_t makeCudaGraph(const Driver &d, CUcontext ctx, CUstream stream, int32_t ordinal,
                      std::function<int32_t(const std::string &)> onFault, LibraryCall library,
                      const DeviceUpdateKit *kit, const std::vector<GraphNode> &nodes, std::unique_ptr<Graph> &out);

}  // namespace hj

#endif  // HOSTJIT_HAVE_NVRTC
