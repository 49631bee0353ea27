// context.cpp - a context's rooms made and torn down, and its settings.
#include "core/context.h"

#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <strings.h>

#include "base/error.h"
#include "profile/nvtx.h"

namespace hj {

namespace {

bool envFlag(const char *name) {
  const char *v = std::getenv(name);
  if (!v || !*v) return false;
  return std::strcmp(v, "0") != 0 && strcasecmp(v, "false") != 0 && strcasecmp(v, "off") != 0;
}

bool option(int32_t value, const char *env) { return value < 0 ? envFlag(env) : value != 0; }

uint32_t graphCacheCapacity(const hj_options &o) {
  if (o.graph_cache) return o.graph_cache;
  if (const char *v = std::getenv("HOSTJIT_GRAPH_CACHE"); v && *v) {
    long n = std::strtol(v, nullptr, 10);
    if (n > 0 && n < (1L << 20)) return static_cast<uint32_t>(n);
  }
  return 1024;
}

uint32_t countSetting(const char *env, uint32_t otherwise) {
  if (const char *v = std::getenv(env); v && *v) {
    long n = std::strtol(v, nullptr, 10);
    if (n >= 0 && n < (1L << 20)) return static_cast<uint32_t>(n);
  }
  return otherwise;
}

uint32_t percentSetting(const char *env, uint32_t otherwise) {
  const char *v = std::getenv(env);
  if (!v || !*v) return otherwise;
  char *end = nullptr;
  long n = std::strtol(v, &end, 10);
  if (*end == 0 && n >= 0 && n <= 100) return static_cast<uint32_t>(n);
  std::fprintf(stderr, "hostjit: %s=%s is not a percent from 0 to 100; using %u\n", env, v, otherwise);
  return otherwise;
}

Settings::DeviceUpdates deviceUpdatesSetting() {
  const char *v = std::getenv("HOSTJIT_GRAPH_DEVICE_UPDATES");
  if (!v || !*v || std::strcmp(v, "auto") == 0) return Settings::kAuto;
  if (std::strcmp(v, "0") == 0) return Settings::kNever;
  if (std::strcmp(v, "1") == 0) return Settings::kAlways;
  std::fprintf(stderr, "hostjit: HOSTJIT_GRAPH_DEVICE_UPDATES=%s is not 0, 1 or auto; using auto\n", v);
  return Settings::kAuto;
}

}  // namespace

Settings settingsOf(const hj_options &o) {
  Settings s;
  s.reuseZeroed = option(o.reuse_zeroed_memory, "HOSTJIT_REUSE_ZEROED_MEMORY");
  s.checkZeroed = option(o.check_zeroed, "HOSTJIT_CHECK_ZEROED");
  s.fillNan = option(o.fill_nan, "HOSTJIT_FILL_NAN");
  s.sync = option(o.sync, "HOSTJIT_SYNC");
  s.graphCache = graphCacheCapacity(o);
  s.graphProbation = countSetting("HOSTJIT_GRAPH_PROBATION", s.graphCache);
  s.graphsPerShape = countSetting("HOSTJIT_GRAPHS_PER_SHAPE", 1024);
  s.graphMemory = uint64_t{countSetting("HOSTJIT_GRAPH_MEMORY_MB", 256)} << 20;
  s.graphMinLaunches = countSetting("HOSTJIT_GRAPH_MIN_LAUNCHES", 4);
  s.graphRecapturePercent = percentSetting("HOSTJIT_GRAPH_RECAPTURE_PERCENT", 33);
  s.graphDeviceUpdates = deviceUpdatesSetting();
  s.profile = option(o.profile, "HOSTJIT_PROFILE");
  s.nvtx = nvtx::wanted();
  s.traceEvents = countSetting("HOSTJIT_TRACE_EVENTS", 262144);
  s.commTimeout = o.comm_timeout > 0 ? o.comm_timeout : o.comm_timeout < 0 ? HUGE_VAL : commTimeoutSeconds();
  const char *env = std::getenv("HOSTJIT_COMM_TIMEOUT");
  s.commTimeoutGiven = o.comm_timeout != 0 || (env && *env);
  return s;
}

int32_t notAContext(const hj_context *ctx, const char *fn) {
  if (!ctx) return fail(HJ_ERR_INVALID_ARGUMENT, "%s: ctx is NULL", fn);
  if (ctx->magic != hj_context::kLive)
    return fail(HJ_ERR_INVALID_ARGUMENT,
                "%s: ctx %p is not a live hostjit context (destroyed, or not made by hj_context_create)", fn,
                static_cast<const void *>(ctx));
  return HJ_OK;
}

}  // namespace hj

hj_context::hj_context(std::unique_ptr<hj::Backend> b, const hj_options &o, const hj::Settings &s)
    : backend(std::move(b)),
      options(o),
      settings(s),
      record(o.record != 0),
      buffers(*backend, stats, injector, record, settings, o.memory_limit),
      eager(hj::EagerRoom{*backend, buffers, record, events, stats, injector, settings, comm}),
      profiler(s.profile ? std::make_unique<hj::Profiler>(*backend, stats, s.traceEvents) : nullptr),
      observed(s.profile || s.nvtx ? std::make_unique<hj::ObservedPath>(eager, profiler.get(), settings) : nullptr),
      recorded(observed ? static_cast<hj::CallPath &>(*observed) : eager, record),
      outside(record.on() ? &recorded : observed ? static_cast<hj::CallPath *>(observed.get()) : &eager),
      path(outside),
      graphs(hj::GraphRoom{*backend, buffers, record, stats, injector, settings, comm, path, outside,
                           profiler.get()}) {
  int64_t failAt = o.fail_at;
  if (failAt < 0) {
    const char *v = std::getenv("HOSTJIT_FAIL_AT");
    failAt = v && *v ? std::strtoll(v, nullptr, 10) : 0;
  }
  if (failAt > 0) injector.arm(static_cast<uint64_t>(failAt));
}

hj_context::~hj_context() {
  magic = 0;
  if (comm) {
    (void)backend->synchronize();  // its collectives are done before it goes
    graphs.dropCommunicating();  // NCCL's abort waits for the graphs its work was captured into
    backend->onDevice([&](void *) {
      comm.reset();
      return HJ_OK;
    });
  }
}
