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

namespace hj {

// Queues a library call (its pointers set) on a stream being captured.
using LibraryCall = std::function<int32_t(const MatmulCall &, CUstream)>;

// Builds and instantiates the graph of `nodes`, launched on `stream`.
// onFault turns a sticky error (the device faulted) into the backend's;
// library makes the calls of Library nodes, captured (it must outlive the
// graph).
int32_t makeCudaGraph(const Driver &d, CUcontext ctx, CUstream stream, int32_t ordinal,
                      std::function<int32_t(const std::string &)> onFault, LibraryCall library,
                      const std::vector<GraphNode> &nodes, std::unique_ptr<Graph> &out);

}  // namespace hj

#endif  // HOSTJIT_HAVE_NVRTC
