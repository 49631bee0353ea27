// graph_replay.cpp - the end of a replay that ran the program (patches
// learned from its addresses), and fast replays, which skip the program:
// outputs allocated, addresses and values patched, the graph launched.
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

void GraphExecutor::forgetSources(GraphEntry &e) {
  std::fill(e.sourceValue.begin(), e.sourceValue.end(), kUnknown);
}

void GraphExecutor::abandon() {
  for (void *p : fastOut_)
    if (p)
      if (Block *b = r_.buffers.take(p)) r_.buffers.release(b);
  fastOut_.clear();
}

// After a replay that ran the program: the nodes hold this call's addresses.
void GraphExecutor::noteSources(GraphEntry &e, const GraphCall &call,
                                const std::vector<std::pair<uint32_t, void *>> &outputs) {
  const std::vector<void *> &inputs = call.inputs;
  if (e.sourceValue.size() != inputs.size() + outputs.size()) return forgetSources(e);
  for (size_t i = 0; i < inputs.size(); ++i) e.sourceValue[i] = inputs[i];
  for (size_t j = 0; j < outputs.size(); ++j) e.sourceValue[inputs.size() + j] = outputs[j].second;
}

void GraphExecutor::rebase(GraphEntry &e) {
  const GraphShape &s = *e.shape;
  for (const Patch &p : e.inner) {
    void *at = static_cast<char *>(s.block) + s.offset[p.source] + p.delta;
    markDirty(e, p.op, &at, p.offset, sizeof at);
  }
  for (size_t i = 0; i < e.allocs.size(); ++i) e.allocs[i].offset = s.offset[i];
  e.epoch = s.epoch;
}

int32_t GraphExecutor::finishReplay(GraphEntry &e, const GraphCall &call, ReplayMatcher &m, void **outData,
                                    int64_t *outDims) {
  const auto &outputs = m.outputs();
  const std::vector<void *> &inputs = call.inputs;
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
          *source = static_cast<uint32_t>(inputs.size() + j);
          return from(o);
        }
      }
      auto *block = static_cast<const char *>(e.shape->block);
      if (c >= block && c < block + e.shape->blockBytes) return false;
      const void *best = nullptr;
      for (size_t i = 0; i < inputs.size(); ++i) {
        if (inputs[i] == p) {
          *source = static_cast<uint32_t>(i);
          return from(p);
        }
        if (std::less_equal<const void *>()(inputs[i], p) && (!best || std::less<const void *>()(best, inputs[i]))) {
          best = inputs[i];
          *source = static_cast<uint32_t>(i);
        }
      }
      return best && from(best);
    };
    e.numInputs = static_cast<uint32_t>(inputs.size());
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
    indexPatches(e, inputs.size() + outputs.size());
    e.fast = call.fast;
    e.outSource.assign(call.numOutputs, 0);
    for (uint32_t k = 0; k < call.numOutputs; ++k) {
      int64_t delta = 0;
      if (!sourceOf(outData[k], &e.outSource[k], &delta) || delta != 0) e.fast = false;
    }
    if (!mapValues(e, call.values)) e.fast = false;
    e.outDims.assign(outDims, outDims + call.numDims);
    e.resolved = true;
  }
  if (int32_t st = pushAndLaunch(e)) {
    forgetSources(e);
    m.freeOutputs(programStream());
    return abortComm(e, st);
  }
  noteSources(e, call, outputs);
  if (int32_t st = checkZeroed(e)) {
    m.freeOutputs(programStream());
    return st;
  }
  ++r_.stats.graph_replays;
  return HJ_OK;
}

// Where each hj_graph_value of the call goes in the nodes. The program has
// just computed those arguments itself: a value that does not match what it
// computed means the caller's values are not what the program takes, and
// replays keep running the program (false; no value is placed).
bool GraphExecutor::mapValues(GraphEntry &e, const std::vector<hj_graph_value> &values) {
  e.valuePatches.clear();
  std::vector<uint32_t> kernelOps;
  for (uint32_t i = 0; i < e.ops.size(); ++i)
    if (e.ops[i].kind() == GraphNode::Kind::Kernel) kernelOps.push_back(i);
  for (const hj_graph_value &v : values) {
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

int32_t GraphExecutor::fastReplay(GraphEntry &e, void *const *inputs, const hj_graph_value *values, void **outData,
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
