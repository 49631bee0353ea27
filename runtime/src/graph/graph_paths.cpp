// graph_paths.cpp - the trace and replay paths: each runtime call of a
// program in graph mode, handed to the graph cache.
#include "graph/graph_paths.h"

#include "base/error.h"
#include "graph/graph_cache.h"

namespace hj {

namespace {

// Trace: nothing reaches the device, nothing fails on purpose (injection
// counts the calls that will reach it), nothing is counted or recorded.
class TracePath final : public CallPath {
 public:
  TracePath(GraphCache &g, const GraphRoom &r) : g_(g), r_(r) {}
  uint32_t stream() const override { return g_.stream(); }
  int32_t alloc(const AllocCall &c, void **out) override { return g_.traceAlloc(c, out); }
  int32_t free(void *ptr, bool onError) override { return g_.traceFree(ptr, onError); }
  void afterError() override {
    if (r_.comm) r_.comm->closeGroups();
  }
  int32_t launch(const LaunchCall &c) override { return g_.traceLaunch(c.table, c.kernel, c.dims, c.params); }
  int32_t setStream(uint32_t stream) override { return g_.setStream(stream); }
  int32_t recordUse(void *ptr) override {
    g_.traceUse(ptr);
    return HJ_OK;
  }
  int32_t event(uint32_t event, bool wait) override { return g_.event(event, wait); }
  int32_t streamSync() override { return g_.streamSync(); }
  int32_t collective(const CollectiveCall &c) override { return g_.traceCollective(c); }
  int32_t matmul(const MatmulCall &c) override { return g_.traceMatmul(c); }
  int32_t customCall(const CustomCall &c) override { return g_.traceCustomCall(c); }
  bool dropsGraphsOnAbort() const override { return true; }

 private:
  GraphCache &g_;
  GraphRoom r_;
};

// Replay: the calls are made against the plan and counted and recorded as
// eager calls are; launches, memsets and collectives become the graph's
// nodes, launched when the program ends.
class ReplayPath final : public CallPath {
 public:
  ReplayPath(GraphCache &g, const GraphRoom &r) : g_(g), r_(r) {}
  uint32_t stream() const override { return g_.stream(); }
  int32_t alloc(const AllocCall &c, void **out) override {
    if (int32_t st = r_.backend.checkFault()) return st;
    if (int32_t st = r_.injector.check("hj_alloc of %%%s", c.name)) return st;
    return g_.replayAlloc(c, out);
  }
  int32_t free(void *ptr, bool onError) override { return g_.replayFree(ptr, onError); }
  void afterError() override {
    r_.backend.setStream(0);
    if (r_.comm) r_.comm->closeGroups();
  }
  int32_t launch(const LaunchCall &c) override {
    const KernelEntry &k = c.table->kernels[c.kernel];
    if (int32_t st = r_.backend.checkFault()) return st;
    if (int32_t st = r_.injector.check("launch of @%s (%s)", k.name.c_str(), *c.site ? c.site : "no site given"))
      return st;
    r_.buffers.noteLaunch(k, c.kernel, c.dims, c.params, g_.stream());
    if (int32_t st = g_.replayLaunch(c.table, c.kernel, c.dims, c.params)) return st;
    ++r_.stats.launches;
    return HJ_OK;
  }
  int32_t setStream(uint32_t stream) override {
    // The stream orders the graph's nodes; the graph itself runs on stream
    // 0, where its buffers belong.
    return g_.setStream(stream);
  }
  int32_t recordUse(void *ptr) override {
    Block *b = r_.buffers.find(ptr);
    if (!b) return fail(HJ_ERR_INVALID_ARGUMENT, "hj_record_use: %p is not a live buffer of this context", ptr);
    r_.buffers.markUsed(b, g_.stream());  // the backend's stream: 0 all through graph mode
    return HJ_OK;
  }
  int32_t event(uint32_t event, bool wait) override {
    if (int32_t st = r_.backend.checkFault()) return st;
    if (int32_t st = r_.injector.check("%s of event %u on stream %u", wait ? "wait for" : "record", event, g_.stream()))
      return st;
    // An edge of the graph; no event reaches the device.
    return g_.event(event, wait);
  }
  int32_t streamSync() override {
    if (int32_t st = r_.backend.checkFault()) return st;
    if (int32_t st = r_.injector.check("synchronisation of stream %u", g_.stream())) return st;
    // Later nodes of every stream follow this stream's.
    return g_.streamSync();
  }
  int32_t collective(const CollectiveCall &c) override {
    if (int32_t st = r_.backend.checkFault()) return st;
    if (int32_t st = r_.injector.check("rank %d: %s", r_.comm->rank(), c.what->c_str())) return st;
    // A node of the graph (or a part of its group's node): it communicates
    // when the graph is launched.
    if (int32_t st = g_.replayCollective(c)) return st;
    if (c.kind >= HJ_COLL_GROUP_BEGIN) return HJ_OK;
    ++r_.stats.collectives;
    r_.stats.collective_bytes += c.bytes;
    r_.buffers.noteCollective(c.kind, c.src, c.dst, c.recordBytes, c.dtype, c.op, c.peer, g_.stream());
    return HJ_OK;
  }
  int32_t matmul(const MatmulCall &c) override {
    if (int32_t st = r_.backend.checkFault()) return st;
    if (int32_t st = r_.injector.check("matmul (%s)", c.site)) return st;
    // A node of the graph: it multiplies when the graph is launched.
    if (int32_t st = g_.replayMatmul(c)) return st;
    ++r_.stats.library_calls;
    r_.buffers.noteMatmul(c, g_.stream());
    return HJ_OK;
  }
  int32_t customCall(const CustomCall &c) override {
    const KernelEntry &k = c.table->kernels[c.callee];
    if (int32_t st = r_.backend.checkFault()) return st;
    if (int32_t st = r_.injector.check("custom call @%s (%s)", k.name.c_str(), c.site)) return st;
    // A node of the graph: the function runs when the graph is built (its
    // work captured) and its work when the graph is launched.
    if (int32_t st = g_.replayCustomCall(c)) return st;
    ++r_.stats.library_calls;
    r_.buffers.noteLaunch(k, c.callee, nullptr, c.params, g_.stream());
    return HJ_OK;
  }
  bool rerunsOnFailure() const override { return g_.mismatched(); }
  bool dropsGraphsOnAbort() const override { return true; }

 private:
  GraphCache &g_;
  GraphRoom r_;
};

}  // namespace

std::unique_ptr<CallPath> makeTracePath(GraphCache &graphs, const GraphRoom &room) {
  return std::make_unique<TracePath>(graphs, room);
}

std::unique_ptr<CallPath> makeReplayPath(GraphCache &graphs, const GraphRoom &room) {
  return std::make_unique<ReplayPath>(graphs, room);
}

}  // namespace hj
