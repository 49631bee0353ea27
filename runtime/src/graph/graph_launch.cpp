// graph_launch.cpp - an executable graph launched: built, or its changed
// nodes set (rebuilt for updates at launch when the policy says so), what
// it re-captured told to the worth policy, the zeroed memory checked.
#include "graph/graph_executor.h"

#include <algorithm>
#include <bit>
#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <functional>

#include "base/dtypes.h"
#include "base/error.h"
#include "graph/graph_internal.h"

namespace hj {

namespace {

// Whether a node's update captures its operation anew (a child graph on
// CUDA): library calls, custom calls and collectives.
bool captured(const PlannedOp &op) {
  return std::visit(Overloaded{[](const PlannedMemset &) { return false; }, [](const PlannedFill &) { return false; },
                               [](const PlannedKernel &) { return false; },
                               [](const PlannedCollective &) { return true; },
                               [](const PlannedLibrary &) { return true; }, [](const PlannedCustom &) { return true; }},
                    op.work);
}

}  // namespace

int32_t GraphExecutor::pushAndLaunch(GraphEntry &e) {
  GraphExec &x = *e.exec;
  x.lastUse = signatures_.tick();
  if (!x.graph) {
    ProfileScope span(r_.profiler, SpanKind::GraphBuild, e.ops.size(), 0, false);
    if (int32_t st = span.done(build(e))) return st;
  } else {
    if (x.holder != &e) {
      // The nodes hold another signature's values: set those that differ.
      for (uint32_t i : e.dirty) e.ops[i].dirty = false;
      e.dirty.clear();
      for (uint32_t i = 0; i < e.ops.size(); ++i)
        if (!sameNode(e.ops[i], x.nodes[i])) {
          e.ops[i].dirty = true;
          e.dirty.push_back(i);
        }
      x.holder = &e;
    }
    bool rebuilt = false;
    if (int32_t st = rebuildForUpdates(e, &rebuilt)) return st;
    bool anyGrid = false;
    // Library calls, custom calls and collectives captured anew.
    uint64_t recaptured = rebuilt ? e.libraryCalls + e.collectives : 0;
    if (!e.dirty.empty()) {
      ProfileScope span(r_.profiler, SpanKind::GraphUpdate, e.dirty.size(), 0, false);
      if (int32_t st = r_.injector.check("updating %zu nodes of a graph", e.dirty.size())) return st;
      size_t done = 0;
      for (; done < e.dirty.size(); ++done) {
        PlannedOp &op = e.ops[e.dirty[done]];
        bool grid = newDims(op, x.nodes[e.dirty[done]]), onDevice = false;
        if (int32_t st = x.graph->update(e.dirty[done], nodeOf(op, r_.comm.get()), &onDevice)) {
          // A node the backend cannot update in place (a driver may refuse a
          // 2D memset's new destination, a memset's new size, a child graph
          // of another shape): build the graph anew from the values.
          if (st == HJ_ERR_BACKEND && !r_.backend.faulty()) {
            if (int32_t rb = build(e)) return rb;
            recaptured = e.libraryCalls + e.collectives;
            break;
          }
          e.dirty.erase(e.dirty.begin(), e.dirty.begin() + static_cast<std::ptrdiff_t>(done));  // the rest stay dirty
          return st;
        }
        noteNode(op, x.nodes[e.dirty[done]]);
        if (!rebuilt) recaptured += captured(op);
        op.dirty = false;
        ++r_.stats.graph_updates;
        r_.stats.graph_grid_updates += grid;
        r_.stats.graph_device_updates += onDevice;
        anyGrid |= grid;
      }
      e.dirty.clear();
      span.done(HJ_OK);
    }
    x.updates.updated(anyGrid);
    if (e.key.size() >= sizeof(uint64_t)) {
      uint64_t program;
      std::memcpy(&program, e.key.data(), sizeof program);
      worth_.launched(program, e.ops.size(), recaptured);
    }
  }
  if (e.ops.empty()) return HJ_OK;
  if (int32_t st = r_.injector.check("launching a graph of %zu operations", e.ops.size())) return st;
  ProfileScope span(r_.profiler, SpanKind::GraphLaunch, e.ops.size(), 0, true);
  if (int32_t st = x.graph->launch()) return span.done(st);
  if (e.collectives && r_.comm) {
    if (e.watchWhat.empty()) e.watchWhat = watchName(e);
    if (int32_t st = r_.comm->watchLaunch(r_.backend.nativeStream(), e.watchWhat)) return span.done(st);
  }
  return span.done(HJ_OK);
}

int32_t GraphExecutor::abortComm(GraphEntry &e, int32_t status) {
  if (status == HJ_OK || !r_.comm || e.collectives == 0) return status;
  std::string why = hj_last_error();
  dropCommunicating_();  // e among them: not used after this
  r_.comm->abort(why);
  r_.comm->closeGroups();
  return fail(status, "%s", why.c_str());
}

int32_t GraphExecutor::rebuildForUpdates(GraphEntry &e, bool *rebuilt) {
  GraphExec &x = *e.exec;
  UpdatePolicy::Rebuild decided = x.updates.beforeLaunch(r_.settings.graphDeviceUpdates, !e.dirty.empty(),
                                                         x.deviceUpdates, [&] { return x.graph->deviceBehind(); });
  if (decided == UpdatePolicy::Rebuild::No) return HJ_OK;
  ProfileScope span(r_.profiler, SpanKind::GraphBuild, e.ops.size(), 0, false);
  if (int32_t st = span.done(build(e))) return st;
  *rebuilt = true;
  using Rebuilt = CallOutcome::Rebuilt;
  outcome_.rebuilt(decided == UpdatePolicy::Rebuild::ForHost ? Rebuilt::ForHost
                   : x.deviceUpdates                         ? Rebuilt::ForDevice
                                                             : Rebuilt::NoDevice);
  return HJ_OK;
}

std::string GraphExecutor::watchName(const GraphEntry &e) {
  for (const PlannedOp &op : e.ops)
    if (const auto *coll = std::get_if<PlannedCollective>(&op.work))
      for (const CollectivePart &c : coll->parts)
        if (c.kind < HJ_COLL_GROUP_BEGIN)
          return "a replay of a graph holding " + std::to_string(e.collectives) + " collective" +
                 (e.collectives == 1 ? "" : "s") + ", the first " + c.what;
  return "a replay of a graph holding collectives";
}

int32_t GraphExecutor::build(GraphEntry &e) {
  GraphExec &x = *e.exec;
  dropGraph(x);
  x.holder = nullptr;
  std::vector<GraphNode> nodes;
  nodes.reserve(e.ops.size());
  for (const PlannedOp &op : e.ops) nodes.push_back(nodeOf(op, r_.comm.get()));
  int32_t st = r_.injector.check("building a graph of %zu operations", e.ops.size());
  bool device = x.updates.wantDevice(r_.settings.graphDeviceUpdates);
  if (st == HJ_OK) st = r_.backend.buildGraph(nodes, device, x.graph);
  if (st != HJ_OK) {
    x.graph.reset();
    x.deviceUpdates = false;
    return st;
  }
  x.deviceUpdates = x.graph->deviceUpdates();
  x.bytes = kNodeBytes * e.ops.size();
  execBytes_ += x.bytes;
  x.nodes.resize(e.ops.size());
  for (size_t i = 0; i < e.ops.size(); ++i) {
    noteNode(e.ops[i], x.nodes[i]);
    e.ops[i].dirty = false;
  }
  e.dirty.clear();
  x.holder = &e;
  ++r_.stats.graph_builds;
  return HJ_OK;
}

int32_t GraphExecutor::checkZeroed(GraphEntry &e) {
  const GraphShape &s = *e.shape;
  if (!r_.settings.checkZeroed || s.zeroedBytes == 0) return HJ_OK;
  if (int32_t st = r_.backend.synchronize()) return st;
  std::vector<unsigned char> host(s.zeroedBytes);
  char *zeroed = static_cast<char *>(s.block) + s.zeroedOffset;
  if (int32_t st = r_.backend.copyToHost(host.data(), zeroed, s.zeroedBytes)) return st;
  for (const PlannedAlloc &a : e.allocs) {
    if (!a.zeroed || a.output) continue;
    const unsigned char *p = host.data() + (a.offset - s.zeroedOffset);
    for (size_t i = 0; i < a.bytes; ++i) {
      if (p[i] == 0) continue;
      // Repair the plan's memory so later replays still start at zero.
      r_.backend.memsetZero(zeroed, s.zeroedBytes);
      ++r_.stats.memsets;
      return fail(HJ_ERR_NOT_ZEROED,
                  "HOSTJIT_CHECK_ZEROED: buffer %%%s (%s, %" PRIu64
                  " bytes, zero_init resets_to_zero) was not zero after the graph ran: byte %zu is 0x%02x; the last "
                  "kernel given it was @%s, which must leave it zero",
                  a.name.c_str(), dtypeName(a.dtype), a.bytes, i, p[i], a.lastKernel[0] ? a.lastKernel : "(none)");
    }
  }
  return HJ_OK;
}

}  // namespace hj
