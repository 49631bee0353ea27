// host_backend.cpp - the host backend: device memory is host memory and
// kernels are host functions, registered or loaded from libraries.

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <random>
#include <unordered_map>

#include "backend/backend.h"
#include "backend/custom_call.h"
#include "base/error.h"
#include "base/shared_library.h"
#include "host/host_matmul.h"

namespace hj {

namespace {

// dlopen'd libraries, closed when the last context or table using them goes.
struct HostLibraries {
  std::vector<void *> handles;
  ~HostLibraries() {
    for (void *h : handles) closeLibrary(h);
  }
};

// A replay list: the nodes with copies of their arguments, run one at a
// time (collectives through the communicator, now): in index order, or with
// HOSTJIT_GRAPH_SHUFFLE=<seed> in a random order that keeps only the
// dependencies, so that a missing edge (a missing wait) changes results here
// as it may on a GPU. Built for device updates, it says which kernel nodes
// a CUDA graph would take at launch (new arguments and grids, not a new
// block or shared memory size), so the policy that chooses them and its
// counters are the same on both backends.
class HostGraph final : public Graph {
 public:
  explicit HostGraph(Backend &backend) : backend_(backend) {
    if (const char *v = std::getenv("HOSTJIT_GRAPH_SHUFFLE"); v && *v) {
      shuffle_ = true;
      random_.seed(std::strtoull(v, nullptr, 10));
    }
  }

  void add(const GraphNode &node) {
    Stored &s = nodes_.emplace_back();
    s.node = node;
    s.deps.assign(node.deps, node.deps + node.numDeps);
    s.node.deps = nullptr;
    s.node.numDeps = 0;
    store(s, s.node.op);
  }

  bool deviceUpdates() const override { return deviceUpdates_; }
  // As on CUDA: built for device updates only with a node that can take
  // them, a kernel neither cooperative nor in clusters.
  static bool updatable(const GraphNode &n) {
    const KernelNode *k = std::get_if<KernelNode>(&n.op);
    return k && !(k->kernel->launchFlags & HJ_LAUNCH_COOPERATIVE) && !k->kernel->clustered();
  }
  void offerDeviceUpdates() {
    deviceUpdates_ = std::any_of(nodes_.begin(), nodes_.end(), [](const Stored &s) { return updatable(s.node); });
  }
  bool deviceBehind() override { return false; }  // its launches run as they are made

  int32_t update(size_t index, const GraphNode &node, bool *onDevice) override {
    *onDevice = false;
    if (index >= nodes_.size()) return fail(HJ_ERR_INTERNAL, "host graph: node %zu does not exist", index);
    Stored &s = nodes_[index];
    if (node.kind() != s.node.kind()) return fail(HJ_ERR_INTERNAL, "host graph: node %zu changes its kind", index);
    if (const KernelNode *k = std::get_if<KernelNode>(&node.op)) {
      const KernelNode &was = std::get<KernelNode>(s.node.op);
      *onDevice = deviceUpdates_ && updatable(node) && k->smem == was.smem && k->block.x == was.block.x &&
                  k->block.y == was.block.y && k->block.z == was.block.z;
    }
    s.node.op = node.op;  // the same kind, kernel and call by the contract: only values change
    store(s, s.node.op);
    return HJ_OK;
  }

  int32_t launch() override {
    if (shuffle_) shuffledOrder();
    for (size_t at = 0; at < nodes_.size(); ++at) {
      Stored &s = nodes_[shuffle_ ? order_[at] : at];
      int32_t st = std::visit(
          Overloaded{[&](const MemsetNode &m) { return backend_.memsetZero(m.ptr, m.bytes); },
                     [&](const FillNode &f) { return backend_.fill(f.ptr, f.bytes, f.pattern, f.width); },
                     [&](const KernelNode &k) {
                       return backend_.launch(*k.kernel, k.grid, k.block, k.smem, s.ptrs.data());
                     },
                     [&](const CollectiveNode &c) {
                       int32_t r = HJ_OK;
                       for (size_t i = 0; i < s.parts.size() && r == HJ_OK; ++i) {
                         const CollectivePart &p = s.parts[i];
                         r = c.comm->run(p.kind, s.buffers[2 * i], s.buffers[2 * i + 1], p.count, p.dtype, p.op, p.peer,
                                         nullptr, false, p.what);
                       }
                       return r;
                     },
                     [&](const CustomNode &c) {
                       return invokeCustomCall(*c.kernel, s.ptrs.data(), HJ_BACKEND_HOST, 0, nullptr, s.site.c_str());
                     },
                     [&](const LibraryNode &) {
                       MatmulCall m = s.matmul;
                       m.a = s.buffers[0], m.b = s.buffers[1], m.c = s.buffers[2], m.bias = s.buffers[3];
                       m.workspace = s.buffers[4];
                       bool replayed = false;
                       return backend_.matmul(m, &replayed);
                     }},
          s.node.op);
      if (st != HJ_OK) return st;
    }
    return HJ_OK;
  }

 private:
  struct Stored {
    GraphNode node;
    std::vector<unsigned char> values;
    std::vector<void *> ptrs;
    std::vector<CollectivePart> parts;  // Collective
    std::vector<void *> buffers;        // Collective: 2 per part; Library: A, B, C, bias, workspace
    MatmulCall matmul;                  // Library
    std::string site;                   // Custom
    std::vector<uint32_t> deps;
  };

  // order_: a topological order of the nodes, each pick random among the
  // nodes whose dependencies have run.
  void shuffledOrder() {
    size_t n = nodes_.size();
    std::vector<uint32_t> waiting(n, 0);
    std::vector<std::vector<uint32_t>> next(n);
    for (uint32_t i = 0; i < n; ++i)
      for (uint32_t d : nodes_[i].deps) {
        ++waiting[i];
        next[d].push_back(i);
      }
    std::vector<uint32_t> ready;
    for (uint32_t i = 0; i < n; ++i)
      if (!waiting[i]) ready.push_back(i);
    order_.clear();
    while (!ready.empty()) {
      size_t pick = std::uniform_int_distribution<size_t>(0, ready.size() - 1)(random_);
      uint32_t i = ready[pick];
      ready[pick] = ready.back();
      ready.pop_back();
      order_.push_back(i);
      for (uint32_t j : next[i])
        if (--waiting[j] == 0) ready.push_back(j);
    }
    HJ_INVARIANT(order_.size() == n);
  }

  // Copies what the node points to (arguments, parts, buffers, the call,
  // the site), as a CUDA graph does when a node is made; launch() runs the
  // copies.
  static void store(Stored &s, GraphOp &op) {
    std::visit(Overloaded{[](MemsetNode &) {}, [](FillNode &) {},
                          [&](KernelNode &k) { k.params = copyParams(s, *k.kernel, k.params); },
                          [&](CustomNode &c) {
                            c.params = copyParams(s, *c.kernel, c.params);
                            s.site = c.site;
                            c.site = nullptr;
                          },
                          [&](CollectiveNode &c) {
                            s.parts.assign(c.parts, c.parts + c.numParts);
                            s.buffers.assign(c.buffers, c.buffers + 2 * c.numParts);
                            c.parts = s.parts.data();
                            c.buffers = s.buffers.data();
                          },
                          [&](LibraryNode &l) {
                            s.matmul = *l.matmul;
                            s.buffers.assign(l.buffers, l.buffers + 5);
                            l.matmul = nullptr;  // launch() reads s.matmul: a member moves with Stored
                            l.buffers = s.buffers.data();
                          }},
               op);
  }

  // Copies the argument values; returns the pointers to the copies.
  static void **copyParams(Stored &s, const KernelEntry &kernel, void **params) {
    const std::vector<int32_t> &kinds = kernel.params;
    size_t total = 0;
    for (int32_t k : kinds) total += paramBytes(k);
    s.values.resize(total);
    s.ptrs.resize(kinds.size());
    size_t off = 0;
    for (size_t i = 0; i < kinds.size(); ++i) {
      size_t n = paramBytes(kinds[i]);
      std::memcpy(s.values.data() + off, params[i], n);
      s.ptrs[i] = s.values.data() + off;
      off += n;
    }
    return s.ptrs.data();
  }

  Backend &backend_;
  bool deviceUpdates_ = false;
  std::vector<Stored> nodes_;
  bool shuffle_ = false;
  std::mt19937_64 random_;
  std::vector<uint32_t> order_;
};

class HostBackend final : public Backend {
 public:
  hj_backend_kind kind() const override { return HJ_BACKEND_HOST; }
  int32_t dlDeviceType() const override { return 1; /* kDLCPU */ }
  int32_t deviceId() const override { return 0; }

  int32_t allocate(size_t bytes, void **out) override {
    size_t rounded = (bytes + 255) & ~size_t{255};
    void *p = std::aligned_alloc(256, rounded == 0 ? 256 : rounded);
    if (!p) return fail(HJ_ERR_OUT_OF_MEMORY, "host backend: cannot allocate %zu bytes", bytes);
    *out = p;
    return HJ_OK;
  }
  void release(void *ptr) override { std::free(ptr); }

  int32_t memsetZero(void *ptr, size_t bytes) override {
    std::memset(ptr, 0, bytes);
    return HJ_OK;
  }
  int32_t fill(void *ptr, size_t bytes, uint64_t pattern, unsigned width) override {
    auto *p = static_cast<unsigned char *>(ptr);
    for (size_t i = 0; i + width <= bytes; i += width) std::memcpy(p + i, &pattern, width);
    return HJ_OK;
  }
  int32_t launch(const KernelEntry &kernel, const hj_dim3 &grid, const hj_dim3 &block, uint32_t smem,
                 void **params) override {
    if (hostFaultReports() != faultReportsSeen_) takeHostFault();  // only what this kernel reports counts
    faultReportsSeen_ = hostFaultReports();
    kernel.host(&grid, &block, smem, params);
    // Like a GPU, the launch itself succeeds; the fault surfaces later.
    if (hostFaultReports() != faultReportsSeen_) {
      faultReportsSeen_ = hostFaultReports();
      if (std::string f = takeHostFault(); !f.empty()) faulted("host kernel @" + kernel.name + ": " + f);
    }
    return HJ_OK;
  }
  int32_t matmul(const MatmulCall &c, bool *replayed) override {
    *replayed = false;
    hostMatmul(c);
    return HJ_OK;
  }
  int32_t buildGraph(const std::vector<GraphNode> &nodes, bool deviceUpdates, std::unique_ptr<Graph> &out) override {
    auto g = std::make_unique<HostGraph>(*this);
    for (const GraphNode &n : nodes) g->add(n);
    if (deviceUpdates) g->offerDeviceUpdates();
    out = std::move(g);
    return HJ_OK;
  }
  int32_t copyToHost(void *dst, const void *src, size_t bytes) override {
    std::memcpy(dst, src, bytes);
    return HJ_OK;
  }
  int32_t copyFromHost(void *dst, const void *src, size_t bytes) override {
    std::memcpy(dst, src, bytes);
    return HJ_OK;
  }
  int32_t synchronize() override { return checkFault(); }

  // Work runs when it is queued, so every stream is always idle and every
  // event complete; streams and events keep their bookkeeping only.
  int32_t addStream() override {
    ++streams_;
    return HJ_OK;
  }
  uint32_t numStreams() const override { return streams_; }
  void setStream(uint32_t index) override { current_ = index; }
  uint32_t currentStream() const override { return current_; }
  int32_t createEvent(void **out) override {
    *out = new HostEvent();
    return HJ_OK;
  }
  int32_t createTimingEvent(void **out) override {
    *out = new HostEvent{0, true, 0};
    return HJ_OK;
  }
  // Work ran when it was queued, so the time between two records is the
  // work's wall-clock time.
  int32_t elapsedMs(void *from, void *to, float *ms) override {
    *ms = static_cast<float>(static_cast<HostEvent *>(to)->ns - static_cast<HostEvent *>(from)->ns) * 1e-6f;
    return checkFault();
  }
  void destroyEvent(void *event) override { delete static_cast<HostEvent *>(event); }
  int32_t recordEvent(void *event) override {
    auto *e = static_cast<HostEvent *>(event);
    ++e->records;
    if (e->timing)
      e->ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
                  .count();
    return checkFault();
  }
  int32_t waitEvent(void *) override { return checkFault(); }
  int32_t eventDone(void *, bool *done) override {
    *done = true;
    return checkFault();
  }
  int32_t synchronizeStream() override { return checkFault(); }

  int32_t makeComm(const hj_comm_id &id, int32_t world, int32_t rank, double timeout, bool,
                   std::unique_ptr<Comm> &out) override {
    return makeHostComm(id, world, rank, timeout, out);
  }
  int32_t onDevice(const std::function<int32_t(void *)> &f) override { return f(nullptr); }

  int32_t loadKernel(const hj_kernel_desc &desc, KernelEntry &out) override {
    if (!desc.host_symbol)
      return fail(HJ_ERR_NOT_FOUND, "kernel @%s has no host implementation (give it `host = \"...\"`)",
                  desc.name ? desc.name : "?");
    std::string sym = desc.host_symbol;
    if (auto it = registered_.find(sym); it != registered_.end()) {
      out.host = it->second;
      return HJ_OK;
    }
    for (void *h : libs_->handles) {
      if (void *f = librarySymbol(h, sym.c_str())) {
        out.host = reinterpret_cast<hj_host_kernel_fn>(f);
        return HJ_OK;
      }
    }
    return fail(HJ_ERR_NOT_FOUND,
                "kernel @%s: host kernel '%s' is not registered and not exported by a "
                "loaded library (--host-kernels)",
                desc.name ? desc.name : "?", sym.c_str());
  }

  int32_t registerHostKernel(const char *name, hj_host_kernel_fn fn) override {
    if (!name || !fn) return fail(HJ_ERR_INVALID_ARGUMENT, "hj_register_host_kernel: name and function are required");
    registered_[name] = fn;
    return HJ_OK;
  }

  int32_t loadHostLibrary(const char *path) override {
    if (!path) return fail(HJ_ERR_INVALID_ARGUMENT, "hj_load_host_library: path is NULL");
    OpenedLibrary opened = openLibrary({path});
    void *h = opened.handle;
    if (!h) return fail(HJ_ERR_NOT_FOUND, "cannot load host kernel library '%s': %s", path, opened.firstError.c_str());
    libs_->handles.push_back(h);
    // A library not linked with the runtime reports faults through its hook.
    if (void *hook = librarySymbol(h, "hj_host_fault_hook"))
      *static_cast<void (**)(const char *)>(hook) = &hj_report_host_fault;
    return HJ_OK;
  }

  std::shared_ptr<void> keepAlive() override { return libs_; }

 private:
  uint64_t faultReportsSeen_ = 0;  // hostFaultReports() when this backend last looked
  struct HostEvent {
    uint64_t records = 0;
    bool timing = false;  // createTimingEvent: each record stamps the time
    int64_t ns = 0;       // steady_clock at the last record
  };
  std::unordered_map<std::string, hj_host_kernel_fn> registered_;
  std::shared_ptr<HostLibraries> libs_ = std::make_shared<HostLibraries>();
  uint32_t streams_ = 1, current_ = 0;
};

}  // namespace

std::unique_ptr<Backend> makeHostBackend() { return std::make_unique<HostBackend>(); }

}  // namespace hj
