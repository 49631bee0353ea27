// graph_paths.cpp - the trace and replay paths: each runtime call of a
// program in graph mode, checked as the eager path checks it, handed to
// the recorder or the matcher.
#include "graph/graph_paths.h"

#include "base/error.h"

namespace hj {

void TracePath::afterError() {
  if (r_.comm) r_.comm->closeGroups();
}

int32_t ReplayPath::alloc(const AllocCall &c, void **out) {
  if (int32_t st = r_.backend.checkFault()) return st;
  if (int32_t st = r_.injector.check("hj_alloc of %%%s", c.name)) return st;
  return matcher_.alloc(c, out);
}

void ReplayPath::afterError() {
  r_.backend.setStream(0);
  if (r_.comm) r_.comm->closeGroups();
}

int32_t ReplayPath::launch(const LaunchCall &c) {
  const KernelEntry &k = c.table->kernels[c.kernel];
  if (int32_t st = r_.backend.checkFault()) return st;
  if (int32_t st = r_.injector.check("launch of @%s (%s)", k.name.c_str(), *c.site ? c.site : "no site given"))
    return st;
  r_.buffers.noteLaunch(k, c.kernel, c.dims, c.params, order_.stream());
  if (int32_t st = matcher_.launch(c.table, c.kernel, c.dims, c.params)) return st;
  ++r_.stats.launches;
  return HJ_OK;
}

int32_t ReplayPath::recordUse(void *ptr) {
  Block *b = r_.buffers.find(ptr);
  if (!b) return fail(HJ_ERR_INVALID_ARGUMENT, "hj_record_use: %p is not a live buffer of this context", ptr);
  r_.buffers.markUsed(b, order_.stream());
  return HJ_OK;
}

int32_t ReplayPath::event(uint32_t event, bool wait) {
  if (int32_t st = r_.backend.checkFault()) return st;
  if (int32_t st = r_.injector.check("%s of event %u on stream %u", wait ? "wait for" : "record", event, order_.stream()))
    return st;
  // An edge of the graph; no event reaches the device.
  return order_.event(event, wait);
}

int32_t ReplayPath::streamSync() {
  if (int32_t st = r_.backend.checkFault()) return st;
  if (int32_t st = r_.injector.check("synchronisation of stream %u", order_.stream())) return st;
  // Later nodes of every stream follow this stream's.
  return order_.streamSync();
}

int32_t ReplayPath::collective(const CollectiveCall &c) {
  if (int32_t st = r_.backend.checkFault()) return st;
  if (int32_t st = r_.injector.check("rank %d: %s", r_.comm->rank(), c.what->c_str())) return st;
  // A node of the graph (or a part of its group's node): it communicates
  // when the graph is launched.
  if (int32_t st = matcher_.collective(c)) return st;
  if (c.kind >= HJ_COLL_GROUP_BEGIN) return HJ_OK;
  ++r_.stats.collectives;
  r_.stats.collective_bytes += c.bytes;
  r_.buffers.noteCollective(c.kind, c.src, c.dst, c.recordBytes, c.dtype, c.op, c.peer, order_.stream());
  return HJ_OK;
}

int32_t ReplayPath::matmul(const MatmulCall &c) {
  if (int32_t st = r_.backend.checkFault()) return st;
  if (int32_t st = r_.injector.check("matmul (%s)", c.site)) return st;
  // A node of the graph: it multiplies when the graph is launched.
  if (int32_t st = matcher_.matmul(c)) return st;
  ++r_.stats.library_calls;
  r_.buffers.noteMatmul(c, order_.stream());
  return HJ_OK;
}

int32_t ReplayPath::customCall(const CustomCall &c) {
  const KernelEntry &k = c.table->kernels[c.callee];
  if (int32_t st = r_.backend.checkFault()) return st;
  if (int32_t st = r_.injector.check("custom call @%s (%s)", k.name.c_str(), c.site)) return st;
  // A node of the graph: the function runs when the graph is built (its
  // work captured) and its work when the graph is launched.
  if (int32_t st = matcher_.customCall(c)) return st;
  ++r_.stats.library_calls;
  r_.buffers.noteLaunch(k, c.callee, nullptr, c.params, order_.stream());
  return HJ_OK;
}

}  // namespace hj
