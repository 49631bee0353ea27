// py_runtime.cpp - hostjit.Runtime: creating a context from keyword options,
// and its counters, record, profile and trace as Python objects.
#include "py_runtime.h"

#include <cstdio>

namespace hostjit::py {

namespace {

// The CUDA driver's handles for the default streams (cuda.h's
// CU_STREAM_LEGACY and CU_STREAM_PER_THREAD), valid on every context.
void *const kLegacyStream = reinterpret_cast<void *>(uintptr_t{1});

}  // namespace

void raiseRuntime(int32_t status, const char *what) {
  Error e = runtimeError(status);
  raise(e.status, std::string(what) + ": " + e.message);
}

void *streamHandle(pyb::handle obj, const char *what, bool *given) {
  *given = !obj.is_none();
  if (obj.is_none()) return nullptr;
  pyb::object v = pyb::reinterpret_borrow<pyb::object>(obj);
  if (pyb::hasattr(obj, "__cuda_stream__")) {
    pyb::object t = obj.attr("__cuda_stream__")();
    if (!pyb::isinstance<pyb::tuple>(t) || pyb::len(t) != 2)
      raise(HJ_ERR_INVALID_ARGUMENT, std::string(what) + ": __cuda_stream__() must return (version, handle)");
    v = t[pyb::int_(1)];
  } else if (pyb::hasattr(obj, "cuda_stream")) {
    v = obj.attr("cuda_stream");
  } else if (pyb::hasattr(obj, "ptr") && !pyb::isinstance<pyb::int_>(obj)) {
    v = obj.attr("ptr");
  }
  if (!pyb::isinstance<pyb::int_>(v))
    raise(HJ_ERR_INVALID_ARGUMENT, std::string(what) + ": expected a CUDA stream (an int handle, a torch.cuda.Stream, "
                                                       "a cupy stream or an object with __cuda_stream__), got " +
                                       std::string(pyb::str(pyb::type::of(obj).attr("__name__"))));
  return reinterpret_cast<void *>(v.cast<uintptr_t>());
}

std::shared_ptr<PyRuntime> PyRuntime::create(const RuntimeOptions &o) {
  hj_options opts;
  hj_options_init(&opts);
  if (o.backend == "auto") opts.backend = HJ_BACKEND_AUTO;
  else if (o.backend == "host") opts.backend = HJ_BACKEND_HOST;
  else if (o.backend == "cuda") opts.backend = HJ_BACKEND_CUDA;
  else raise(HJ_ERR_INVALID_ARGUMENT, "backend: expected \"auto\", \"host\" or \"cuda\", got \"" + o.backend + "\"");
  if (o.device < 0) raise(HJ_ERR_INVALID_ARGUMENT, "device: expected a CUDA ordinal >= 0, got " + std::to_string(o.device));
  opts.device = o.device;
  opts.memory_limit = o.memoryLimit;
  opts.record = o.record;
  opts.graph_cache = o.graphCache;
  if (o.profile) opts.profile = 1;
  if (o.sync) opts.sync = 1;
  bool given = false;
  void *stream = streamHandle(o.stream, "stream", &given);
  if (given) {
    if (opts.backend == HJ_BACKEND_HOST)
      raise(HJ_ERR_INVALID_ARGUMENT, "stream: the host backend has no streams; give none");
    // Handle 0 is the legacy default stream (PyTorch's default), which
    // hj_options spells CU_STREAM_LEGACY: its NULL means "make a stream".
    opts.stream = stream ? stream : kLegacyStream;
  }
  auto rt = Runtime::create(opts);
  if (!rt) raise(rt.error());
  auto r = std::make_shared<PyRuntime>();
  r->rt_ = std::move(*rt);
  r->cuda_ = hj_context_backend(r->context()) == HJ_BACKEND_CUDA;
  r->stream_ = hj_context_native_stream(r->context());
  for (const std::string &lib : o.hostKernels) r->loadHostKernels(lib);
  for (const std::string &lib : o.customCalls) r->loadCustomCalls(lib);
  return r;
}

pyb::dict PyRuntime::stats() const {
  hj_stats s;
  {
    std::lock_guard lk(mutex_);
    hj_get_stats(context(), &s);
  }
  pyb::dict d;
#define HJ_STAT(name, meaning) d[#name] = s.name;
#include "hostjit/stats.def"
#undef HJ_STAT
  return d;
}

void PyRuntime::resetStats() {
  std::lock_guard lk(mutex_);
  hj_reset_stats(context());
}

std::vector<std::string> PyRuntime::record() const {
  std::lock_guard lk(mutex_);
  return rt_->recordLines();
}

void PyRuntime::setRecording(bool on) {
  std::lock_guard lk(mutex_);
  hj_record_enable(context(), on);
}

pyb::list PyRuntime::profile() const {
  std::vector<hj_profile_row> rows;
  {
    pyb::gil_scoped_release nogil;  // waits for the profiled work
    std::lock_guard lk(mutex_);
    auto p = rt_->profile();
    if (!p) {
      pyb::gil_scoped_acquire gil;
      raise(p.error());
    }
    rows = std::move(*p);
  }
  pyb::list out;
  for (const hj_profile_row &r : rows) {
    pyb::dict d;
    d["kind"] = r.kind;
    d["name"] = r.name;
    d["site"] = r.site;
    d["calls"] = r.calls;
    d["timed"] = r.timed;
    d["device_us_total"] = r.device_us_total;
    d["device_us_median"] = r.device_us_median;
    d["device_us_min"] = r.device_us_min;
    d["device_us_max"] = r.device_us_max;
    d["host_us_total"] = r.host_us_total;
    d["host_us_median"] = r.host_us_median;
    out.append(std::move(d));
  }
  return out;
}

void PyRuntime::clearProfile() {
  std::lock_guard lk(mutex_);
  if (int32_t st = hj_profile_clear(context())) raiseRuntime(st, "clear_profile");
}

void PyRuntime::writeTrace(const std::string &path) const {
  Expected<void> ok;
  {
    pyb::gil_scoped_release nogil;
    std::lock_guard lk(mutex_);
    ok = rt_->writeTrace(path);
  }
  if (!ok) raise(ok.error());
}

std::string PyRuntime::graphOutcome() const {
  std::lock_guard lk(mutex_);
  return hj_graph_outcome(context());
}

std::string PyRuntime::graphReason() const {
  std::lock_guard lk(mutex_);
  return hj_graph_reason(context());
}

pyb::object PyRuntime::graphPlan() const {
  std::lock_guard lk(mutex_);
  uint64_t count = 0, block = 0, zeroed = 0;
  if (hj_graph_plan_size(context(), &count, &block, &zeroed) != HJ_OK) {
    hj_clear_error();
    return pyb::none();
  }
  pyb::list buffers;
  for (uint64_t i = 0; i < count; ++i) {
    hj_plan_buffer b;
    if (int32_t st = hj_graph_plan_get(context(), i, &b)) raiseRuntime(st, "graph_plan");
    pyb::dict d;
    d["name"] = b.name;
    d["bytes"] = b.bytes;
    d["offset"] = b.offset;
    d["capacity"] = b.capacity;
    d["first"] = b.first;
    d["last"] = b.last == UINT64_MAX ? pyb::object(pyb::none()) : pyb::object(pyb::int_(b.last));
    d["output"] = static_cast<bool>(b.output);
    d["zeroed"] = static_cast<bool>(b.zeroed);
    d["stream"] = b.stream;
    buffers.append(std::move(d));
  }
  pyb::dict plan;
  plan["block_bytes"] = block;
  plan["zeroed_offset"] = zeroed;
  plan["buffers"] = buffers;
  return plan;
}

void PyRuntime::synchronize() const {
  int32_t st;
  {
    pyb::gil_scoped_release nogil;
    std::lock_guard lk(mutex_);
    st = hj_synchronize(context());
  }
  if (st) raiseRuntime(st, "synchronize");
}

void PyRuntime::emptyCache() {
  std::lock_guard lk(mutex_);
  if (int32_t st = hj_empty_cache(context())) raiseRuntime(st, "empty_cache");
}

void PyRuntime::loadHostKernels(const std::string &path) {
  std::lock_guard lk(mutex_);
  // Host kernels serve the host backend; on CUDA the kernels' CUDA code is used.
  if (cuda_) return;
  if (int32_t st = hj_load_host_library(context(), path.c_str())) raiseRuntime(st, ("host_kernels " + path).c_str());
}

void PyRuntime::loadCustomCalls(const std::string &path) {
  std::lock_guard lk(mutex_);
  if (int32_t st = hj_load_custom_library(context(), path.c_str())) raiseRuntime(st, ("custom_calls " + path).c_str());
}

std::string PyRuntime::repr() const {
  DLDevice d = rt_->device();
  char buf[96];
  if (cuda_) std::snprintf(buf, sizeof buf, "hostjit.Runtime(backend='cuda', device=%d, stream=0x%zx)", d.device_id,
                           reinterpret_cast<uintptr_t>(stream_));
  else std::snprintf(buf, sizeof buf, "hostjit.Runtime(backend='host')");
  return buf;
}

}  // namespace hostjit::py
