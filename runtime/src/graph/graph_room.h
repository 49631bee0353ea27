// graph_room.h - what graph mode works with from its context: the backend,
// buffers, record, counters, fault injector, settings, communicator and
// the context's call paths.
#pragma once

#include <memory>

#include "backend/backend.h"
#include "base/call_path.h"
#include "base/fault_injection.h"
#include "base/settings.h"
#include "comm/comm.h"
#include "memory/buffers.h"
#include "profile/profiler.h"
#include "record/call_record.h"

namespace hj {

// The communicator is one a context may get after its graph cache is made;
// `path` is the context's current call path, which graph mode points at
// its trace and replay paths while a graph-mode call runs and gives back
// to `outside` when it ends.
struct GraphRoom {
  Backend &backend;
  Buffers &buffers;
  CallRecord &record;
  hj_stats &stats;
  FaultInjector &injector;
  const Settings &settings;
  std::unique_ptr<Comm> &comm;
  CallPath *&path;
  CallPath *&outside;   // the path outside graph-mode calls (eager, observed or recorded: core/context.h)
  Profiler *profiler;   // NULL unless the context profiles
};

}  // namespace hj
