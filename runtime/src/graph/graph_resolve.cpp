// graph_resolve.cpp - a traced signature made ready to launch from its
// trace alone: the trace's fake addresses become the plan's slots and
// patches for the call's inputs and outputs, so the program need not run
// a second time.
#include "graph/graph_executor.h"

#include <algorithm>
#include <cstring>

#include "graph/graph_internal.h"

namespace hj {

bool GraphExecutor::resolve(GraphEntry &e, const GraphCall &call, void *const *outData, const int64_t *outDims) {
  size_t n = call.inputs.size();
  e.numInputs = static_cast<uint32_t>(n);
  e.outputAllocs.clear();
  std::vector<uint32_t> outIndex(e.allocs.size(), UINT32_MAX);
  for (uint32_t i = 0; i < e.allocs.size(); ++i)
    if (e.allocs[i].output) {
      outIndex[i] = static_cast<uint32_t>(e.outputAllocs.size());
      e.outputAllocs.push_back(i);
    }
  // The inputs by address, for the many weights of a model.
  inputOrder_.clear();
  for (uint32_t i = 0; i < n; ++i) inputOrder_.emplace_back(call.inputs[i], i);
  std::stable_sort(inputOrder_.begin(), inputOrder_.end(),
                   [](const auto &a, const auto &b) { return std::less<const void *>()(a.first, b.first); });
  // The input an address is in: the first input at the address, else (a
  // view of an input at an offset: every address the trace did not hand
  // out is an input's) the nearest input below it, delta bytes on.
  auto inputOf = [&](const void *p, uint32_t *source, int64_t *delta) {
    auto below = [](const auto &a, const void *q) { return std::less<const void *>()(a.first, q); };
    auto it = std::lower_bound(inputOrder_.begin(), inputOrder_.end(), p, below);
    if (it == inputOrder_.end() || it->first != p) {
      if (it == inputOrder_.begin()) return false;
      it = std::lower_bound(inputOrder_.begin(), inputOrder_.end(), std::prev(it)->first, below);
    }
    *source = it->second;
    *delta = static_cast<const char *>(p) - static_cast<const char *>(it->first);
    return true;
  };
  // Each address: an output's (patched per call), an input's (patched when
  // it moves) or an intermediate's (its slot in the plan).
  bool ok = true;
  e.patches.clear();
  e.inner.clear();
  for (uint32_t oi = 0; oi < e.ops.size() && ok; ++oi)
    forEachAddress(e.ops[oi], [&](uint32_t off) {
      const void *p = addressAt(e.ops[oi], off);
      size_t a;
      uint64_t within = 0;
      uint32_t source;
      int64_t delta = 0;
      if (!p) return;
      if (fakeIndex(p, &a, &within) && a < e.allocs.size())
        (outIndex[a] != UINT32_MAX ? e.patches : e.inner)
            .push_back({oi, off,
                        outIndex[a] != UINT32_MAX ? static_cast<uint32_t>(n + outIndex[a]) : static_cast<uint32_t>(a),
                        static_cast<int64_t>(within)});
      else if (inputOf(p, &source, &delta))
        e.patches.push_back({oi, off, source, delta});
      else
        ok = false;  // an address the trace did not hand out and no input has
    });
  e.outSource.assign(call.numOutputs, 0);
  for (uint32_t k = 0; ok && k < call.numOutputs; ++k) {
    size_t a;
    uint64_t within = 0;
    int64_t delta = 0;
    if (fakeIndex(outData[k], &a, &within) && within == 0 && a < e.allocs.size() && outIndex[a] != UINT32_MAX)
      e.outSource[k] = static_cast<uint32_t>(n + outIndex[a]);
    else
      ok = inputOf(outData[k], &e.outSource[k], &delta) && delta == 0;
  }
  if (!ok) {
    e.patches.clear();
    e.inner.clear();
    return false;
  }
  indexPatches(e, n + e.outputAllocs.size());
  e.fast = call.fast && mapValues(e, call.values);
  if (!e.fast) e.valuePatches.clear();
  e.outDims.assign(outDims, outDims + call.numDims);
  const GraphShape &s = *e.shape;
  for (const Patch &p : e.inner) {
    void *at = static_cast<char *>(s.block) + s.offset[p.source] + p.delta;
    std::memcpy(e.ops[p.op].values.data() + p.offset, &at, sizeof at);
  }
  e.resolved = e.innerKnown = true;
  return true;
}

}  // namespace hj
