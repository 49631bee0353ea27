// memory_plan.cpp - a traced signature's memory plan: intermediates at
// offsets of one block, sharing memory where lifetimes allow.
#include "graph/graph_cache.h"

#include <algorithm>
#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <cstring>

#include "base/dtypes.h"
#include "base/error.h"
#include "graph/graph_internal.h"
#include "graph/graph_paths.h"

namespace hj {

int32_t GraphCache::plan(GraphEntry &e) {
  std::vector<uint32_t> general, zeroed;
  for (uint32_t i = 0; i < e.allocs.size(); ++i) {
    PlannedAlloc &a = e.allocs[i];
    if (a.output) continue;
    // Nodes of different streams may run at once, in any order (conflict()).
    if (e.streams && e.unknownUse) a.lastEvent = SIZE_MAX;
    (a.zeroed ? zeroed : general).push_back(i);
    ++e.fastAllocs;
    if (a.op >= 0) ++(e.ops[a.op].kind == GraphNode::Kind::Memset ? e.fastMemsets : e.fastFills);
  }
  size_t generalBytes = place(e.allocs, general);
  size_t zeroedBytes = place(e.allocs, zeroed);
  for (uint32_t i : zeroed) e.allocs[i].offset += generalBytes;
  e.zeroedOffset = generalBytes;
  e.zeroedBytes = zeroedBytes;
  e.blockBytes = generalBytes + zeroedBytes;
  for (const PlannedOp &op : e.ops) {
    if (op.kind == GraphNode::Kind::Library || op.kind == GraphNode::Kind::Custom) ++e.libraryCalls;
    if (op.kind == GraphNode::Kind::Kernel) ++e.launches;
    if ((op.kind == GraphNode::Kind::Kernel || op.kind == GraphNode::Kind::Custom) && !e.keepAlive)
      e.keepAlive = op.table->keepAlive;
  }
  e.dirty.reserve(e.ops.size());  // markDirty then never allocates
  if (e.blockBytes == 0) return HJ_OK;
  if (int32_t st = r_.buffers.memory().allocate(e.blockBytes, &e.block)) {
    e.block = nullptr;
    if (st == HJ_ERR_INJECTED) return st;
    std::string why = hj_last_error();
    return fail(st, "graph mode: the memory plan of %zu intermediates (%zu bytes): %s",
                general.size() + zeroed.size(), e.blockBytes, why.c_str());
  }
  r_.stats.graph_bytes += e.blockBytes;
  if (zeroedBytes) {
    // resets_to_zero buffers: zeroed once here, left zero by their kernels.
    int32_t st = r_.injector.check("zeroing the memory plan of a graph (%zu bytes)", zeroedBytes);
    if (st == HJ_OK) st = r_.backend.memsetZero(static_cast<char *>(e.block) + generalBytes, zeroedBytes);
    if (st) return st;
    ++r_.stats.memsets;  // like the arena's growth; not recorded: the program did not call it
  }
  return HJ_OK;
}

}  // namespace hj
