// calls.h - the pieces of the runtime's calls that graph mode shares with
// eager calls: buffer sizes, pool buffers, the record and the stats.
#pragma once

#include <cstdint>

#include "context.h"

namespace hj {

const char *dtypeName(uint32_t dtype);
// The HOSTJIT_FILL_NAN pattern of a dtype (contract point 6).
uint64_t nanPattern(uint32_t dtype);
// Bytes of a buffer with these extents and element strides (NULL:
// contiguous); stride 0 dims take no memory. Errors name the buffer.
int32_t bufferBytes(const int64_t *sizes, const int64_t *strides, uint32_t rank, uint32_t esize, const char *name,
                    uint64_t *out);
// Appends an entry to the record (the caller checks ctx->recording).
RecordedCall &record(hj_context *ctx, int32_t kind, const Block *b, const char *name);
// The stream the program is on: the backend's, or in graph mode's Trace and
// Replay runs the one the graph's nodes are being placed on.
uint32_t programStream(const hj_context *ctx);
// A buffer as hj_alloc makes it eagerly: from the arena or the pool, zeroed
// or NaN-filled per its flags, recorded, counted and live. With deferInit the
// zeroing or filling is recorded and counted but left to the caller (a
// graph's memset node). With `at`, the buffer is planned memory of a graph
// (allocation `planned` of its plan) instead of the arena's or the pool's.
// A pool buffer is the cached block at `prefer` when that one is free.
int32_t allocBlock(hj_context *ctx, uint64_t bytes, uint32_t flags, uint32_t dtype, const char *name, bool deferInit,
                   Block **out, void *at = nullptr, int32_t planned = -1, const void *prefer = nullptr);
// Takes a buffer out of use (it is no longer live): counted, and returned to
// the arena, the pool or its graph.
void releaseBlock(hj_context *ctx, Block *b);
// HJ_OK for a live context; else HJ_ERR_INVALID_ARGUMENT naming the entry
// point `fn` (NULL, destroyed, or not a context: see hj_context::magic).
int32_t checkContext(const hj_context *ctx, const char *fn);
// Gives a block back to its graph, arena or pool cache, at once.
void returnBlock(hj_context *ctx, Block *b);
// Streams (streams.cpp). A freed block that work on another stream used
// waits for that work (events recorded now) before returnBlock; others go
// back at once. pollDeferred returns those whose work has passed;
// releaseStreams (context destruction) waits for all and frees the events.
void deferOrReturn(hj_context *ctx, Block *b);
void pollDeferred(hj_context *ctx);
// Out of memory: waits for the device, then returns every deferred free.
void reclaimDeferred(hj_context *ctx);
void releaseStreams(hj_context *ctx);
// HOSTJIT_CHECK_ZEROED for an arena buffer being freed.
int32_t checkZeroedOnFree(hj_context *ctx, Block *b);

}  // namespace hj
