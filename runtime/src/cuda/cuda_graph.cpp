// cuda_graph.cpp - CUDA graphs of graph mode: built from nodes and edges,
// nodes updated in place, launched.
#include "cuda/cuda_graph.h"

#ifdef HOSTJIT_HAVE_NVRTC

#include <array>
#include <cstring>

#include "backend/custom_call.h"
#include "base/error.h"
#include "cuda/cuda_launch.h"

namespace hj {

namespace {

// The memset node that does what CudaBackend::memsetZero does.
int memsetNodes(const MemsetNode &n, CUDA_MEMSET_NODE_PARAMS out[2]) {
  out[0] = CUDA_MEMSET_NODE_PARAMS{};
  out[0].dst = dptr(n.ptr);
  out[0].height = 1;
  out[0].elementSize = 1;
  out[0].width = n.bytes;
  return 1;
}

// The memset nodes that do what CudaBackend::fill does (one node, or two
// for an 8-byte pattern of unequal halves).
int memsetNodes(const FillNode &n, CUDA_MEMSET_NODE_PARAMS out[2]) {
  for (int i = 0; i < 2; ++i) out[i] = CUDA_MEMSET_NODE_PARAMS{};
  CUdeviceptr p = dptr(n.ptr);
  out[0].dst = p;
  out[0].height = 1;
  size_t count = n.bytes / n.width;
  uint32_t lo = static_cast<uint32_t>(n.pattern), hi = static_cast<uint32_t>(n.pattern >> 32);
  if (n.width < 8) {
    out[0].elementSize = n.width;
    out[0].width = count;
    out[0].value = n.width == 4 ? lo : n.width == 2 ? (lo & 0xffffu) : (lo & 0xffu);
    return 1;
  }
  if (lo == hi) {
    out[0].elementSize = 4;
    out[0].width = 2 * count;
    out[0].value = lo;
    return 1;
  }
  // Low words at p, p+8, ...; high words at p+4, p+12, ... (pitch 8).
  for (int i = 0; i < 2; ++i) {
    out[i].dst = p + 4 * i;
    out[i].pitch = 8;
    out[i].elementSize = 4;
    out[i].width = 1;
    out[i].height = count;
    out[i].value = i ? hi : lo;
  }
  return 2;
}

CUDA_KERNEL_NODE_PARAMS kernelNode(const KernelNode &n) {
  CUDA_KERNEL_NODE_PARAMS k{};
  k.func = static_cast<CUfunction>(n.kernel->function);
  k.gridDimX = n.grid.x;
  k.gridDimY = n.grid.y;
  k.gridDimZ = n.grid.z;
  k.blockDimX = n.block.x;
  k.blockDimY = n.block.y;
  k.blockDimZ = n.block.z;
  k.sharedMemBytes = n.smem;
  k.kernelParams = n.params;
  return k;
}

// A CUDA graph of the nodes, edges from their dependencies, and its
// executable. A collective node is a child graph captured from the
// communicator's calls on a stream of the graph's own.
class CudaGraph final : public Graph {
 public:
  CudaGraph(const Driver &d, CUcontext ctx, CUstream stream, int32_t ordinal)
      : d_(d), ctx_(ctx), stream_(stream), ordinal_(ordinal) {}
  ~CudaGraph() override {
    CurrentContext cc(d_, ctx_);
    if (exec_) d_.cuGraphExecDestroy(exec_);
    ring_.reset();  // after the executable: it waits for the stream
    if (graph_) d_.cuGraphDestroy(graph_);
    if (capture_) d_.cuStreamDestroy_v2(capture_);
  }

  int32_t build(const std::vector<GraphNode> &nodes, const DeviceUpdateKit *kit) {
    CurrentContext cc(d_, ctx_);
    if (CUresult r = cc.result()) return error("cuCtxSetCurrent", r);
    if (CUresult r = d_.cuGraphCreate(&graph_, 0)) return error("cuGraphCreate", r);
    info_.assign(nodes.size(), NodeInfo{});
    CUgraphNode updater = nullptr;
    if (kit && kit->updater) {
      if (int32_t st = addUpdater(nodes, *kit, &updater)) return st;
    }
    std::vector<CUgraphNode> deps;
    for (const GraphNode &n : nodes) {
      deps.clear();
      for (uint32_t i = 0; i < n.numDeps; ++i) {
        if (n.deps[i] >= nodes_.size()) return fail(HJ_ERR_INTERNAL, "CUDA graph: node %zu depends on a later node", nodes_.size());
        const auto &from = nodes_[n.deps[i]];
        deps.push_back(from[1] ? from[1] : from[0]);
      }
      if (updater && deps.empty()) deps.push_back(updater);  // every node runs after the updates
      std::array<CUgraphNode, 2> made{};
      auto addMemsets = [&](const auto &m) -> int32_t {
        CUDA_MEMSET_NODE_PARAMS p[2];
        int count = memsetNodes(m, p);
        for (int i = 0; i < count; ++i) {
          const CUgraphNode *on = i ? &made[0] : deps.data();
          size_t numOn = i ? 1 : deps.size();
          if (CUresult r = d_.cuGraphAddMemsetNode(&made[i], graph_, on, numOn, &p[i], ctx_))
            return error("cuGraphAddMemsetNode", r);
        }
        return HJ_OK;
      };
      auto addChild = [&](const GraphNode &node) -> int32_t {
        CUgraph child = nullptr;
        if (int32_t st = capture(node, &child)) return st;
        CUresult r = d_.cuGraphAddChildGraphNode(&made[0], graph_, deps.data(), deps.size(), child);
        d_.cuGraphDestroy(child);  // the node holds a copy
        if (r) return error("cuGraphAddChildGraphNode", r);
        return HJ_OK;
      };
      int32_t st = std::visit(Overloaded{[&](const MemsetNode &m) { return addMemsets(m); },
                                         [&](const FillNode &m) { return addMemsets(m); },
                                         [&](const KernelNode &k) { return addKernel(k, deps, made); },
                                         [&](const CollectiveNode &) { return addChild(n); },
                                         [&](const LibraryNode &) { return addChild(n); },
                                         [&](const CustomNode &) { return addChild(n); }},
                              n.op);
      if (st) return st;
      nodes_.push_back(made);
    }
    if (CUresult r = d_.cuGraphInstantiateWithFlags(&exec_, graph_, 0)) return error("cuGraphInstantiate", r);
    // Nodes updated from within the graph need it uploaded before its launch.
    if (ring_)
      if (CUresult r = d_.cuGraphUpload(exec_, stream_)) return error("cuGraphUpload", r);
    return HJ_OK;
  }

  // Adds a kernel node, device-updatable where the node's layout is known.
  int32_t addKernel(const KernelNode &n, const std::vector<CUgraphNode> &deps, std::array<CUgraphNode, 2> &made) {
    CUDA_KERNEL_NODE_PARAMS k = kernelNode(n);
    if (CUresult r = d_.cuGraphAddKernelNode_v2(&made[0], graph_, deps.data(), deps.size(), &k))
      return error("cuGraphAddKernelNode", r, n.kernel->name.c_str());
    CUlaunchAttribute attrs[3];
    unsigned count = launchAttributes(*n.kernel, /*forGraph=*/true, attrs);
    for (unsigned i = 0; i < count; ++i)
      if (CUresult r = d_.cuGraphKernelNodeSetAttribute(made[0], attrs[i].id, &attrs[i].value))
        return error("cuGraphKernelNodeSetAttribute", r, n.kernel->name.c_str());
    NodeInfo &ni = info_[nodes_.size()];
    ni.grid = n.grid, ni.block = n.block, ni.smem = n.smem;
    if (ni.layout) {
      CUlaunchAttributeValue v{};
      v.deviceUpdatableKernelNode.deviceUpdatable = 1;
      if (CUresult r = d_.cuGraphKernelNodeSetAttribute(made[0], CU_LAUNCH_ATTRIBUTE_DEVICE_UPDATABLE_KERNEL_NODE, &v))
        return error("cuGraphKernelNodeSetAttribute(device-updatable)", r, n.kernel->name.c_str());
      CUlaunchAttributeValue got{};
      if (CUresult r = d_.cuGraphKernelNodeGetAttribute(made[0], CU_LAUNCH_ATTRIBUTE_DEVICE_UPDATABLE_KERNEL_NODE, &got))
        return error("cuGraphKernelNodeGetAttribute(device-updatable)", r, n.kernel->name.c_str());
      ni.dev = got.deviceUpdatableKernelNode.devNode;
    }
    return HJ_OK;
  }

  bool deviceUpdates() const override { return ring_ != nullptr; }
  bool deviceBehind() override { return ring_ && ring_->takeBehind(); }

  int32_t update(size_t index, const GraphNode &n, bool *onDevice) override {
    *onDevice = false;
    if (index >= nodes_.size()) return fail(HJ_ERR_INTERNAL, "CUDA graph: node %zu does not exist", index);
    auto memsets = [&](const auto &m) -> int32_t {
      CurrentContext cc(d_, ctx_);
      if (CUresult r = cc.result()) return error("cuCtxSetCurrent", r);
      CUDA_MEMSET_NODE_PARAMS p[2];
      int count = memsetNodes(m, p);
      for (int i = 0; i < count; ++i)
        if (CUresult r = d_.cuGraphExecMemsetNodeSetParams(exec_, nodes_[index][i], &p[i], ctx_))
          return error("cuGraphExecMemsetNodeSetParams", r);
      return HJ_OK;
    };
    // Captured anew with the new buffers; the same calls make the same
    // topology, which an executable's child graph node requires. The
    // executable takes its own references to what the capture holds
    // (NCCL's user objects), so the new graph can go at once.
    auto child = [&]() -> int32_t {
      CurrentContext cc(d_, ctx_);
      if (CUresult r = cc.result()) return error("cuCtxSetCurrent", r);
      CUgraph g = nullptr;
      if (int32_t st = capture(n, &g)) return st;
      CUresult r = d_.cuGraphExecChildGraphNodeSetParams(exec_, nodes_[index][0], g);
      d_.cuGraphDestroy(g);
      if (r) return error("cuGraphExecChildGraphNodeSetParams", r);
      return HJ_OK;
    };
    return std::visit(Overloaded{[&](const MemsetNode &m) { return memsets(m); },
                                 [&](const FillNode &m) { return memsets(m); },
                                 [&](const KernelNode &k) { return updateKernel(index, k, onDevice); },
                                 [&](const CollectiveNode &) { return child(); },
                                 [&](const LibraryNode &) { return child(); },
                                 [&](const CustomNode &) { return child(); }},
                      n.op);
  }

  // A kernel node's update: on the device at the next launch where it can
  // be, else through the driver now.
  int32_t updateKernel(size_t index, const KernelNode &n, bool *onDevice) {
    NodeInfo &ni = info_[index];
    if (ni.dev && ni.queued == ring_->generation()) {
      // Queued already for the next launch (a launch or an update loop
      // failed in between): drop the queue, post every node again.
      ring_->discard();
      repost_ = true;
    }
    if (ni.dev && sameDim(n.block, ni.block) && n.smem == ni.smem) {
      ni.bytes.resize(ni.layout->bytes);
      for (size_t i = 0; i < ni.layout->offset.size(); ++i)
        std::memcpy(ni.bytes.data() + ni.layout->offset[i], n.params[i], ni.layout->size[i]);
      bool grid = !sameDim(n.grid, ni.grid);
      ni.grid = n.grid;
      ni.diverged = true;
      if (!repost_) {
        if (int32_t st = queue(ni, grid)) {
          repost_ = true;  // what the device holds is no longer known: post all
          return st;
        }
      }
      *onDevice = true;
      return HJ_OK;
    }
    CurrentContext cc(d_, ctx_);
    if (CUresult r = cc.result()) return error("cuCtxSetCurrent", r);
    // The host may not set a node the device may still be updating.
    if (ni.dev)
      if (int32_t st = ring_->drain()) return st;
    CUDA_KERNEL_NODE_PARAMS k = kernelNode(n);
    if (CUresult r = d_.cuGraphExecKernelNodeSetParams_v2(exec_, nodes_[index][0], &k))
      return error("cuGraphExecKernelNodeSetParams", r, n.kernel->name.c_str());
    // A host update of a device-updatable node: the graph is uploaded
    // again before its launch, which may put back the values of other
    // nodes the device had updated; launch() posts those again.
    if (ni.dev) upload_ = true;
    ni.diverged = false;
    ni.grid = n.grid, ni.block = n.block, ni.smem = n.smem;
    return HJ_OK;
  }

  int32_t launch() override {
    CurrentContext cc(d_, ctx_);
    if (CUresult r = cc.result()) return error("cuCtxSetCurrent", r);
    if (ring_) {
      // Its nodes' device handles belong to this executable: a copy captured
      // into a caller's graph would update nothing, or this graph's nodes.
      CUstreamCaptureStatus capture = CU_STREAM_CAPTURE_STATUS_NONE;
      if (CUresult r = d_.cuStreamIsCapturing(stream_, &capture)) return error("cuStreamIsCapturing", r);
      if (capture != CU_STREAM_CAPTURE_STATUS_NONE)
        return fail(HJ_ERR_BACKEND,
                    "a graph that takes its node updates at launch cannot be launched into a stream being captured "
                    "(HOSTJIT_GRAPH_DEVICE_UPDATES=0 builds graphs that can)");
      if (repost_ || upload_) {
        // Everything the device was given, grids too, posted again.
        ring_->discard();
        for (NodeInfo &ni : info_)
          if (ni.diverged)
            if (int32_t st = queue(ni, true)) return st;
        repost_ = false;
      }
      if (int32_t st = ring_->post()) return st;
    }
    if (upload_) {
      if (CUresult r = d_.cuGraphUpload(exec_, stream_)) return error("cuGraphUpload", r);
      upload_ = false;
    }
    if (CUresult r = d_.cuGraphLaunch(exec_, stream_)) {
      // The posted updates did not run: the next launch posts every
      // device-held value again.
      if (ring_) {
        ring_->discard();
        repost_ = true;
      }
      return error("cuGraphLaunch", r);
    }
    if (ring_) ring_->launched();
    return HJ_OK;
  }

  // Set by the backend: a sticky error makes the backend faulted.
  std::function<int32_t(const std::string &)> onFault;
  LibraryCall library;  // makes a Library node's call

 private:
  int32_t error(const char *what, CUresult r, const char *kernel = nullptr) {
    if (onFault && (r == CUDA_ERROR_ILLEGAL_ADDRESS || r == CUDA_ERROR_LAUNCH_FAILED || r == CUDA_ERROR_ASSERT))
      return onFault(describe(d_, r) + " on CUDA device " + std::to_string(ordinal_));
    return fail(HJ_ERR_BACKEND, "%s%s%s failed on CUDA device %d: %s", what, kernel ? " for @" : "", kernel ? kernel : "",
                ordinal_, describe(d_, r).c_str());
  }

  // The work of a collective node's, a library node's or a custom call's
  // calls, captured into a new graph (a custom call that queues nothing
  // gives an empty graph, which a child node may hold).
  int32_t capture(const GraphNode &n, CUgraph *out) {
    if (!capture_)
      if (CUresult r = d_.cuStreamCreate(&capture_, CU_STREAM_NON_BLOCKING)) return error("cuStreamCreate", r);
    if (CUresult r = d_.cuStreamBeginCapture_v2(capture_, CU_STREAM_CAPTURE_MODE_RELAXED))
      return error("cuStreamBeginCapture", r);
    Comm *comm = nullptr;
    int32_t st = std::visit(
        Overloaded{[&](const LibraryNode &l) {
                     MatmulCall m = *l.matmul;
                     m.a = l.buffers[0], m.b = l.buffers[1], m.c = l.buffers[2], m.bias = l.buffers[3];
                     m.workspace = l.buffers[4];
                     return library(m, capture_, n.stream);
                   },
                   [&](const CustomNode &c) {
                     return invokeCustomCall(*c.kernel, c.params, HJ_BACKEND_CUDA, ordinal_, capture_, c.site);
                   },
                   [&](const CollectiveNode &c) {
                     comm = c.comm;
                     int32_t s = HJ_OK;
                     for (uint32_t i = 0; i < c.numParts && s == HJ_OK; ++i) {
                       const CollectivePart &p = c.parts[i];
                       s = c.comm->run(p.kind, c.buffers[2 * i], c.buffers[2 * i + 1], p.count, p.dtype, p.op, p.peer,
                                       capture_, true, p.what);
                     }
                     return s;
                   },
                   [&](const MemsetNode &) { return int32_t(HJ_OK); }, [&](const FillNode &) { return int32_t(HJ_OK); },
                   [&](const KernelNode &) { return int32_t(HJ_OK); }},
        n.op);
    std::string why = st ? hj_last_error() : "";
    if (st && comm) comm->closeGroups();  // a group the failed part left open ends inside the capture
    CUgraph g = nullptr;
    CUresult r = d_.cuStreamEndCapture(capture_, &g);
    if (st) {
      if (g) d_.cuGraphDestroy(g);
      return fail(st, "%s", why.c_str());
    }
    if (r) return error("cuStreamEndCapture", r);
    *out = g;
    return HJ_OK;
  }

  static bool sameDim(const hj_dim3 &a, const hj_dim3 &b) { return a.x == b.x && a.y == b.y && a.z == b.z; }

  // The updater node, and the layouts of the kernel nodes it will update;
  // nothing when no node can be device-updatable or no slots can be had.
  int32_t addUpdater(const std::vector<GraphNode> &nodes, const DeviceUpdateKit &kit, CUgraphNode *out) {
    uint32_t updatable = 0;
    uint64_t data = 0;
    for (size_t i = 0; i < nodes.size(); ++i) {
      const KernelNode *n = std::get_if<KernelNode>(&nodes[i].op);
      if (!n || (n->kernel->launchFlags & HJ_LAUNCH_COOPERATIVE) || n->kernel->clustered()) continue;
      const ParamLayout *layout = kit.layout(*n->kernel);
      if (!layout || layout->offset.size() != n->kernel->params.size()) continue;
      info_[i].layout = layout;
      ++updatable;
      data += (layout->bytes + 7) & ~7u;
    }
    if (updatable == 0 || data > (uint64_t{1} << 24) ||
        UpdateRing::make(d_, stream_, 2 * updatable, static_cast<uint32_t>(data), ring_) != HJ_OK) {
      ring_.reset();
      for (NodeInfo &ni : info_) ni.layout = nullptr;
      return HJ_OK;
    }
    CUDA_KERNEL_NODE_PARAMS k{};
    k.func = kit.updater;
    k.gridDimX = k.gridDimY = k.gridDimZ = 1;
    k.blockDimX = 128;
    k.blockDimY = k.blockDimZ = 1;
    k.kernelParams = ring_->args();
    if (CUresult r = d_.cuGraphAddKernelNode_v2(out, graph_, nullptr, 0, &k)) return error("cuGraphAddKernelNode", r, "graph updater");
    return HJ_OK;
  }

  // Per node: a kernel node's dims as the device holds them, and for a
  // device-updatable one its handle, its parameter layout, and the
  // parameters the device was last given (diverged: differing from what
  // the executable's host copy holds).
  struct NodeInfo {
    CUgraphDeviceNode dev = nullptr;
    const ParamLayout *layout = nullptr;
    hj_dim3 grid{}, block{};
    uint32_t smem = 0;
    bool diverged = false;
    uint64_t queued = ~uint64_t{0};  // the ring generation it was last queued in
    std::vector<unsigned char> bytes;
  };

  // Queues a node's parameters (and its grid) for the next launch.
  int32_t queue(NodeInfo &ni, bool grid) {
    if (!ring_->room(ni.layout->bytes))
      return fail(HJ_ERR_INTERNAL, "CUDA graph: no room for a node's device update (at most one each a launch)");
    if (grid)
      if (int32_t st = ring_->grid(ni.dev, ni.grid)) return st;
    unsigned char *data = nullptr;
    if (int32_t st = ring_->param(ni.dev, ni.layout->bytes, &data)) return st;
    if (data) std::memcpy(data, ni.bytes.data(), ni.layout->bytes);
    ni.queued = ring_->generation();
    return HJ_OK;
  }

  const Driver &d_;
  CUcontext ctx_;
  CUstream stream_;
  int32_t ordinal_;
  std::vector<NodeInfo> info_;
  std::unique_ptr<UpdateRing> ring_;  // device updates: the slots of the updater's launches
  bool upload_ = false;               // a device-updatable node was updated by the host
  bool repost_ = false;               // the next launch posts every diverged node's values
  CUgraph graph_ = nullptr;
  CUgraphExec exec_ = nullptr;
  CUstream capture_ = nullptr;  // made for the first collective node
  std::vector<std::array<CUgraphNode, 2>> nodes_;  // per node: its driver nodes (a Fill may take two)
};

}  // namespace

int32_t makeCudaGraph(const Driver &d, CUcontext ctx, CUstream stream, int32_t ordinal,
                      std::function<int32_t(const std::string &)> onFault, LibraryCall library,
                      const DeviceUpdateKit *kit, const std::vector<GraphNode> &nodes, std::unique_ptr<Graph> &out) {
  auto g = std::make_unique<CudaGraph>(d, ctx, stream, ordinal);
  g->onFault = std::move(onFault);
  g->library = std::move(library);
  if (int32_t st = g->build(nodes, kit)) return st;
  out = std::move(g);
  return HJ_OK;
}

}  // namespace hj

#endif  // HOSTJIT_HAVE_NVRTC
