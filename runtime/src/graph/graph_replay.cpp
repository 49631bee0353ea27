// graph_replay.cpp - the end of a replay: the graph built or its changed
// nodes updated, launched; and fast replays, which skip the program.
#include "graph/graph_cache.h"

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
#include "graph/graph_paths.h"

namespace hj {

void GraphCache::forgetSources(GraphEntry &e) {
  std::fill(e.sourceValue.begin(), e.sourceValue.end(), kUnknown);
}

// After a replay that ran the program: the nodes hold this call's addresses.
void GraphCache::noteSources(GraphEntry &e) {
  const auto &outputs = replay_.matcher().outputs();
  if (e.sourceValue.size() != inputs_.size() + outputs.size()) return forgetSources(e);
  for (size_t i = 0; i < inputs_.size(); ++i) e.sourceValue[i] = inputs_[i];
  for (size_t j = 0; j < outputs.size(); ++j) e.sourceValue[inputs_.size() + j] = outputs[j].second;
}

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

int32_t GraphCache::pushAndLaunch(GraphEntry &e) {
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

int32_t GraphCache::rebuildForUpdates(GraphEntry &e, bool *rebuilt) {
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

std::string GraphCache::watchName(const GraphEntry &e) {
  for (const PlannedOp &op : e.ops)
    if (const auto *coll = std::get_if<PlannedCollective>(&op.work))
      for (const CollectivePart &c : coll->parts)
        if (c.kind < HJ_COLL_GROUP_BEGIN)
          return "a replay of a graph holding " + std::to_string(e.collectives) + " collective" +
                 (e.collectives == 1 ? "" : "s") + ", the first " + c.what;
  return "a replay of a graph holding collectives";
}

int32_t GraphCache::build(GraphEntry &e) {
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

void GraphCache::rebase(GraphEntry &e) {
  const GraphShape &s = *e.shape;
  for (const Patch &p : e.inner) {
    void *at = static_cast<char *>(s.block) + s.offset[p.source] + p.delta;
    markDirty(e, p.op, &at, p.offset, sizeof at);
  }
  for (size_t i = 0; i < e.allocs.size(); ++i) e.allocs[i].offset = s.offset[i];
  e.epoch = s.epoch;
}

int32_t GraphCache::checkZeroed(GraphEntry &e) {
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

int32_t GraphCache::finishReplay(GraphEntry &e, void **outData, int64_t *outDims) {
  const auto &outputs = replay_.matcher().outputs();
  e.epoch = e.shape->epoch;  // the program computed the plan's addresses of now
  if (!e.resolved) {
    // The first replay of a signature the trace could not resolve: find
    // which arguments are input or output addresses (patched on fast
    // replays).
    // An address in an output, an input (exactly, else the nearest input
    // below it: a view at an offset), delta bytes on; none for the plan's
    // own memory.
    auto sourceOf = [&](const void *p, uint32_t *source, int64_t *delta) {
      auto from = [&](const void *start) {
        *delta = static_cast<const char *>(p) - static_cast<const char *>(start);
        return true;
      };
      auto *c = static_cast<const char *>(p);
      for (size_t j = 0; j < outputs.size(); ++j) {
        auto *o = static_cast<const char *>(outputs[j].second);
        if (c == o || (c > o && c < o + e.allocs[outputs[j].first].bytes)) {
          *source = static_cast<uint32_t>(inputs_.size() + j);
          return from(o);
        }
      }
      auto *block = static_cast<const char *>(e.shape->block);
      if (c >= block && c < block + e.shape->blockBytes) return false;
      const void *best = nullptr;
      for (size_t i = 0; i < inputs_.size(); ++i) {
        if (inputs_[i] == p) {
          *source = static_cast<uint32_t>(i);
          return from(p);
        }
        if (std::less_equal<const void *>()(inputs_[i], p) && (!best || std::less<const void *>()(best, inputs_[i]))) {
          best = inputs_[i];
          *source = static_cast<uint32_t>(i);
        }
      }
      return best && from(best);
    };
    e.numInputs = static_cast<uint32_t>(inputs_.size());
    e.outputAllocs.clear();
    for (const auto &out : outputs) e.outputAllocs.push_back(out.first);
    e.patches.clear();
    e.inner.clear();
    e.innerKnown = false;
    for (uint32_t oi = 0; oi < e.ops.size(); ++oi) {
      const PlannedOp &op = e.ops[oi];
      // A memset's or fill's destination is patched only for an output.
      const uint32_t *destination = std::visit(
          Overloaded{[](const PlannedMemset &m) { return &m.alloc; }, [](const PlannedFill &f) { return &f.alloc; },
                     [](const auto &) { return static_cast<const uint32_t *>(nullptr); }},
          op.work);
      if (destination && !e.allocs[*destination].output) continue;
      forEachAddress(op, [&](uint32_t off) {
        uint32_t source;
        int64_t delta = 0;
        if (void *p = addressAt(op, off); p && sourceOf(p, &source, &delta))
          e.patches.push_back({oi, off, source, delta});
      });
    }
    indexPatches(e, inputs_.size() + outputs.size());
    e.fast = fast_;
    e.outSource.assign(numOutputs_, 0);
    for (uint32_t k = 0; k < numOutputs_; ++k) {
      int64_t delta = 0;
      if (!sourceOf(outData[k], &e.outSource[k], &delta) || delta != 0) e.fast = false;
    }
    if (!mapValues(e)) e.fast = false;
    e.outDims.assign(outDims, outDims + numDims_);
    e.resolved = true;
  }
  if (int32_t st = pushAndLaunch(e)) {
    forgetSources(e);
    replay_.matcher().freeOutputs(programStream());
    return abortComm(e, st);
  }
  noteSources(e);
  if (int32_t st = checkZeroed(e)) {
    replay_.matcher().freeOutputs(programStream());
    return st;
  }
  ++r_.stats.graph_replays;
  return HJ_OK;
}

// Where each hj_graph_value of the call goes in the nodes. The program has
// just computed those arguments itself: a value that does not match what it
// computed means the caller's values are not what the program takes, and
// replays keep running the program (false; no value is placed).
bool GraphCache::mapValues(GraphEntry &e) {
  e.valuePatches.clear();
  std::vector<uint32_t> kernelOps;
  for (uint32_t i = 0; i < e.ops.size(); ++i)
    if (e.ops[i].kind() == GraphNode::Kind::Kernel) kernelOps.push_back(i);
  for (const hj_graph_value &v : values_) {
    bool ok = v.launch < kernelOps.size();
    const PlannedOp *op = ok ? &e.ops[kernelOps[v.launch]] : nullptr;
    const std::vector<int32_t> *kinds = ok ? &op->kernelEntry()->params : nullptr;
    ok = ok && v.param < kinds->size() && (*kinds)[v.param] != HJ_PARAM_PTR &&
         ((*kinds)[v.param] & 0xff) != HJ_PARAM_TENSOR;
    uint32_t off = 0, bytes = 0;
    if (ok) {
      for (uint32_t j = 0; j < v.param; ++j) off += paramBytes((*kinds)[j]);
      bytes = paramBytes((*kinds)[v.param]);
      ok = std::memcmp(op->values.data() + off, &v.bits, bytes) == 0;
    }
    if (!ok) {
      e.valuePatches.clear();
      return false;
    }
    e.valuePatches.push_back({kernelOps[v.launch], off, bytes});
  }
  return true;
}

int32_t GraphCache::fastReplay(GraphEntry &e, void *const *inputs, const hj_graph_value *values, void **outData,
                               int64_t *outDims, bool first) {
  hj_stats &s = r_.stats;
  if (e.epoch != e.shape->epoch) rebase(e);
  uint64_t liveBefore = s.live_bytes;
  fastOut_.assign(e.outputAllocs.size(), nullptr);
  auto release = [&] {
    forgetSources(e);
    for (void *p : fastOut_)
      if (p)
        if (Block *b = r_.buffers.take(p)) r_.buffers.release(b);
  };
  for (size_t j = 0; j < e.outputAllocs.size(); ++j) {
    const PlannedAlloc &a = e.allocs[e.outputAllocs[j]];
    Block *b = nullptr;
    int32_t st = r_.injector.check("hj_alloc of %%%s", a.name.c_str());
    const void *was = e.sourceValue[e.numInputs + j];  // where the nodes point now
    if (st == HJ_OK)
      st = r_.buffers.allocate(graphRequest(a.bytes, a.flags, a.dtype, a.name.c_str(), programStream(), was == kUnknown ? nullptr : was), &b);
    if (st != HJ_OK) {
      release();
      return st;
    }
    fastOut_[j] = b->ptr;
  }
  // Only the sources whose address changed since the nodes were last set
  // (the inputs compared at once first: a model's weights never move).
  uint32_t from = 0;
  if (e.numInputs && std::memcmp(inputs, e.sourceValue.data(), e.numInputs * sizeof(void *)) == 0) from = e.numInputs;
  for (uint32_t src = from; src + 1 < e.patchStart.size(); ++src) {
    const void *v = src < e.numInputs ? inputs[src] : fastOut_[src - e.numInputs];
    if (v == e.sourceValue[src]) continue;
    for (uint32_t i = e.patchStart[src]; i < e.patchStart[src + 1]; ++i) {
      const Patch &p = e.patches[i];
      const void *at = static_cast<const char *>(v) + p.delta;
      markDirty(e, p.op, &at, p.offset, sizeof at);
    }
    e.sourceValue[src] = v;
  }
  for (size_t i = 0; i < e.valuePatches.size(); ++i) {
    const Patch &p = e.valuePatches[i];
    markDirty(e, p.op, &values[i].bits, p.offset, p.source);
  }
  if (int32_t st = pushAndLaunch(e)) {
    release();
    return abortComm(e, st);
  }
  if (int32_t st = checkZeroed(e)) {
    release();
    return st;
  }
  // Count what the program's calls would have counted.
  s.allocs += e.fastAllocs;
  s.memsets += e.fastMemsets;
  s.fills += e.fastFills;
  s.frees += e.frees;
  s.launches += e.launches;
  s.collectives += e.collectives;
  s.collective_bytes += e.collectiveBytes;
  s.library_calls += e.libraryCalls;
  s.peak_bytes = std::max(s.peak_bytes, liveBefore + e.peakBytes);
  for (uint32_t k = 0; k < e.outSource.size(); ++k) {
    uint32_t src = e.outSource[k];
    outData[k] = src < e.numInputs ? inputs[src] : fastOut_[src - e.numInputs];
  }
  if (!e.outDims.empty()) std::memcpy(outDims, e.outDims.data(), e.outDims.size() * sizeof(int64_t));
  ++s.graph_replays;
  if (!first) ++s.graph_fast;
  fastOut_.clear();  // the caller owns them now
  return HJ_OK;
}

}  // namespace hj
