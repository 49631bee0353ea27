// context.h - the state behind an hj_context and an hj_kernel_table: one
// member per room (backend, buffers, record, streams, communicator, graph
// mode) and the call path the context's mode dispatches to.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "base/call_path.h"
#include "base/fault_injection.h"
#include "base/settings.h"
#include "comm/comm.h"
#include "core/custom_calls.h"
#include "core/eager_path.h"
#include "graph/graph_cache.h"
#include "memory/buffers.h"
#include "profile/observed_path.h"
#include "profile/profiler.h"
#include "record/call_record.h"
#include "record/recorded_path.h"
#include "streams/stream_events.h"

// Member order is destruction order in reverse: the backend outlives the
// rooms that return memory and events to it.
struct hj_context {
  hj_context(std::unique_ptr<hj::Backend> b, const hj_options &o, const hj::Settings &s);
  ~hj_context();

  // kLive while the context exists; the destructor overwrites it, so an
  // entry point given a destroyed context (or any other pointer) can say so
  // while the memory has not been reused for another context.
  static constexpr uint64_t kLive = 0x686a2d6374782d31ull;  // "hj-ctx-1"
  uint64_t magic = kLive;

  std::unique_ptr<hj::Backend> backend;
  hj_options options;
  hj::Settings settings;
  hj_stats stats{};
  hj::FaultInjector injector{stats};
  hj::CallRecord record;
  hj::Buffers buffers;
  hj::StreamEvents events{*backend};
  std::unique_ptr<hj::Comm> comm;  // SPMD: this context's rank (hj_comm_init)
  hj::CustomCalls customCalls;     // hj_register_custom_call
  hj::EagerPath eager;
  // Profiling (hj_options.profile) and NVTX ranges: when either is on,
  // every runtime call goes through `observed`, which wraps `eager`.
  std::unique_ptr<hj::Profiler> profiler;
  std::unique_ptr<hj::ObservedPath> observed;
  // While the record is on (hj_record_enable), every runtime call outside
  // graph mode goes through `recorded`, which wraps `observed` or `eager`.
  hj::RecordedPath recorded;
  // The path outside graph-mode calls: `recorded`, `observed` or `eager`.
  hj::CallPath *outside;
  // The path each runtime call of a program takes: `outside`, or graph
  // mode's trace or replay path while a graph-mode call runs.
  hj::CallPath *path;
  // Declared last so it goes first: its graphs and blocks return to the
  // backend and buffers above.
  hj::GraphCache graphs;
};

namespace hj {

// The context's call path is eager: the entry points then call it directly.
inline bool eagerPath(const hj_context *ctx) { return ctx->path == &ctx->eager; }

// HJ_OK for a live context; else HJ_ERR_INVALID_ARGUMENT naming the entry
// point `fn` (NULL, destroyed, or not a context: see hj_context::magic).
int32_t notAContext(const hj_context *ctx, const char *fn);
inline int32_t checkContext(const hj_context *ctx, const char *fn) {
  return ctx && ctx->magic == hj_context::kLive ? HJ_OK : notAContext(ctx, fn);
}

// The context's settings: hj_options where they say, else the environment.
Settings settingsOf(const hj_options &o);

}  // namespace hj
