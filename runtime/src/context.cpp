// context.cpp - the C entry points of the runtime: contexts, buffers,
// launches, kernel tables, stats and the call record.
#include "context.h"

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "calls.h"
#include "error.h"

using hj::Block;
using hj::bufferBytes;
using hj::checkContext;
using hj::checkZeroedOnFree;
using hj::dtypeName;
using hj::fail;
using hj::guarded;
using hj::nanPattern;
using hj::paramBytes;
using hj::record;
using hj::releaseBlock;

namespace {

bool envFlag(const char *name) {
  const char *v = std::getenv(name);
  if (!v || !*v) return false;
  return std::strcmp(v, "0") != 0 && strcasecmp(v, "false") != 0 && strcasecmp(v, "off") != 0;
}

bool option(int32_t value, const char *env) { return value < 0 ? envFlag(env) : value != 0; }

}  // namespace

namespace hj {

const char *dtypeName(uint32_t d) {
  static const char *names[] = {
#define HJ_DTYPE(name, ident, code, bits, kind) #name,
#include "hostjit/dtypes.def"
#undef HJ_DTYPE
  };
  return d < HJ_DTYPE_COUNT ? names[d] : "?";
}

// The HOSTJIT_FILL_NAN pattern of a dtype (contract point 6).
uint64_t nanPattern(uint32_t dtype) {
  switch (dtype) {
    case HJ_DTYPE_f16: return 0x7E00;
    case HJ_DTYPE_bf16: return 0x7FC0;
    case HJ_DTYPE_f32: return 0x7FC00000u;
    case HJ_DTYPE_f64: return 0x7FF8000000000000ull;
    case HJ_DTYPE_i8: return 0x7F;
    case HJ_DTYPE_i16: return 0x7FFF;
    case HJ_DTYPE_i32: return 0x7FFFFFFFu;
    case HJ_DTYPE_i64: return 0x7FFFFFFFFFFFFFFFull;
    case HJ_DTYPE_u8: return 0xFF;
    case HJ_DTYPE_u32: return 0xFFFFFFFFu;
    case HJ_DTYPE_u64: return ~0ull;
    case HJ_DTYPE_bool: return 1;
  }
  return 0;
}

uint32_t paramBytes(int32_t kind) {
  if ((kind & 0xff) == HJ_PARAM_TENSOR) return hj_param_rank(kind) <= 8 ? 8 + 16 * hj_param_rank(kind) : 0;
  switch (kind) {
    case HJ_PARAM_PTR: return sizeof(void *);
    case HJ_PARAM_I32: return 4;
    case HJ_PARAM_I64: return 8;
    case HJ_PARAM_F32: return 4;
    case HJ_PARAM_F64: return 8;
    case HJ_PARAM_BOOL: return 1;
  }
  return 0;
}

uint32_t programStream(const hj_context *ctx) {
  hj::GraphCache::Mode mode = ctx->graphs.mode();
  if (mode == hj::GraphCache::Mode::Trace || mode == hj::GraphCache::Mode::Replay) return ctx->graphs.stream();
  return ctx->backend->currentStream();
}

hj::RecordedCall &record(hj_context *ctx, int32_t kind, const Block *b, const char *name) {
  hj::RecordedCall &c = ctx->record.emplace_back();
  c.entry.kind = kind;
  c.entry.stream = programStream(ctx);
  if (b) {
    c.entry.buffer = b->id;
    c.entry.bytes = b->bytes;
    c.entry.flags = b->flags;
    c.entry.dtype = b->dtype;
  }
  c.name = name ? name : "";
  return c;
}

// Bytes of a buffer with these extents and element strides; stride 0 dims
// (expanded) take no memory. Returns an error naming the buffer.
int32_t bufferBytes(const int64_t *sizes, const int64_t *strides, uint32_t rank, uint32_t esize, const char *name,
                    uint64_t *out) {
  uint64_t span = 1;  // elements
  bool empty = false;
  for (uint32_t d = 0; d < rank; ++d) {
    if (sizes[d] < 0)
      return fail(HJ_ERR_INVALID_ARGUMENT, "buffer %%%s: extent %u is %" PRId64 ", expected a size >= 0", name, d,
                  sizes[d]);
    if (strides && strides[d] < 0)
      return fail(HJ_ERR_INVALID_ARGUMENT, "buffer %%%s: stride %u is %" PRId64 ", expected >= 0", name, d,
                  strides[d]);
    if (sizes[d] == 0) empty = true;
  }
  if (empty) {
    *out = 0;
    return HJ_OK;
  }
  bool overflow = false;
  if (strides) {
    uint64_t last = 0;
    for (uint32_t d = 0; d < rank; ++d) {
      uint64_t t;
      overflow |= __builtin_mul_overflow(static_cast<uint64_t>(sizes[d] - 1), static_cast<uint64_t>(strides[d]), &t);
      overflow |= __builtin_add_overflow(last, t, &last);
    }
    overflow |= __builtin_add_overflow(last, 1, &span);
  } else {
    for (uint32_t d = 0; d < rank; ++d) overflow |= __builtin_mul_overflow(span, static_cast<uint64_t>(sizes[d]), &span);
  }
  overflow |= __builtin_mul_overflow(span, esize, out);
  if (overflow || *out > HJ_MAX_BUFFER_BYTES)
    return fail(HJ_ERR_INVALID_ARGUMENT, "buffer %%%s: size overflows (extents too large)", name);
  return HJ_OK;
}

int32_t checkZeroedOnFree(hj_context *ctx, Block *b) {
  if (int32_t st = ctx->backend->synchronize()) return st;
  std::vector<unsigned char> host(b->bytes);
  if (int32_t st = ctx->backend->copyToHost(host.data(), b->ptr, b->bytes)) return st;
  for (size_t i = 0; i < host.size(); ++i) {
    if (host[i] == 0) continue;
    // Repair the arena so later buffers still start at zero (point 8).
    ctx->backend->memsetZero(b->ptr, b->bytes);
    ++ctx->stats.memsets;
    if (ctx->recording) record(ctx, HJ_REC_MEMSET, b, b->name);
    return fail(HJ_ERR_NOT_ZEROED,
                "HOSTJIT_CHECK_ZEROED: buffer %%%s (%s, %zu bytes, zero_init resets_to_zero) was not zero when "
                "freed: byte %zu is 0x%02x; the last kernel given it was @%s, which must leave it zero",
                b->name, dtypeName(b->dtype), b->bytes, i, host[i], b->lastKernel[0] ? b->lastKernel : "(none)");
  }
  return HJ_OK;
}

// Gives a block's memory back to where it came from: its graph's plan (the
// Block object only), the arena or the pool.
void returnBlock(hj_context *ctx, Block *b) {
  if (b->planned >= 0) {
    ctx->pool.recycle(b);
  } else if (b->region) {
    ctx->arenas.release(b);
    ctx->pool.recycle(b);
  } else {
    ctx->pool.release(b);
  }
}

void releaseBlock(hj_context *ctx, Block *b) {
  ctx->stats.live_bytes -= b->bytes;
  ++ctx->stats.frees;
  if (b->planned >= 0) ctx->graphs.releasePlanned(b);
  deferOrReturn(ctx, b);
}

int32_t checkContext(const hj_context *ctx, const char *fn) {
  if (!ctx) return fail(HJ_ERR_INVALID_ARGUMENT, "%s: ctx is NULL", fn);
  if (ctx->magic != hj_context::kLive)
    return fail(HJ_ERR_INVALID_ARGUMENT,
                "%s: ctx %p is not a live hostjit context (destroyed, or not made by hj_context_create)", fn,
                static_cast<const void *>(ctx));
  return HJ_OK;
}

}  // namespace hj

hj_context::hj_context(std::unique_ptr<hj::Backend> b, const hj_options &o, bool reuse, bool check, bool nan)
    : backend(std::move(b)),
      options(o),
      reuseZeroed(reuse),
      checkZeroed(check),
      fillNan(nan),
      recording(o.record != 0),
      sync(option(o.sync, "HOSTJIT_SYNC")),
      memory(*backend, stats, o.memory_limit),
      pool(memory, stats),
      arenas(memory, stats) {
  memory.setPool(&pool);
  memory.setInjector(&injector);
  memory.setReclaim([this] { hj::reclaimDeferred(this); });
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
  hj::releaseStreams(this);
  live.forEach([&](const void *, Block *b) {
    if (b->planned >= 0) {
      delete b;  // a graph's memory, returned with the graph
    } else if (b->region) {
      arenas.release(b);
      delete b;
    } else {
      pool.release(b);
    }
  });
}

namespace hj {

int32_t allocBlock(hj_context *ctx, uint64_t bytes, uint32_t flags, uint32_t dtype, const char *name, bool deferInit,
                   Block **out, void *at, int32_t planned, const void *prefer) {
  bool zero = flags & HJ_ALLOC_ZERO_INIT;
  uint32_t esize = hj_dtype_size(dtype);
  bool fromArena = zero && !(flags & HJ_ALLOC_OUTPUT) && ((flags & HJ_ALLOC_RESETS_TO_ZERO) || ctx->reuseZeroed);
  if (!ctx->streams.deferred.empty()) pollDeferred(ctx);
  Block *b = nullptr;
  size_t grew = 0;
  if (at) {
    b = ctx->pool.newBlock();
    b->ptr = at;
  } else if (fromArena) {
    b = ctx->pool.newBlock();
    b->bytes = bytes;
    b->stream = ctx->backend->currentStream();
    int32_t st = HJ_OK;
    try {
      st = ctx->arenas.of(b->stream).allocate(b, &grew);
    } catch (...) {
      ctx->pool.recycle(b);
      throw;
    }
    if (st) {
      ctx->pool.recycle(b);
      return st;
    }
  } else {
    if (int32_t st = ctx->pool.allocate(bytes, ctx->backend->currentStream(), &b, prefer)) return st;
    b->region = nullptr;
    b->lastKernel[0] = '\0';
  }
  b->planned = planned;
  // From here on the block is ours: give it back if anything fails or throws.
  auto giveBack = [&] { returnBlock(ctx, b); };
  try {
    b->bytes = bytes;
    b->flags = flags;
    b->dtype = dtype;
    b->id = ctx->nextBufferId++;
    std::strncpy(b->name, name, sizeof b->name - 1);
    b->name[sizeof b->name - 1] = '\0';
    if (grew) {
      ++ctx->stats.memsets;
      if (ctx->recording) record(ctx, HJ_REC_MEMSET, nullptr, "arena").entry.bytes = grew;
    }
    if (ctx->recording) record(ctx, HJ_REC_ALLOC, b, b->name);
    if (zero && !fromArena && bytes) {
      if (!deferInit) {
        int32_t st = ctx->injector.check("memset of %%%s", b->name);
        if (st == HJ_OK) st = ctx->backend->memsetZero(b->ptr, bytes);
        if (st) {
          giveBack();
          return st;
        }
        if (ctx->sync)
          if (int32_t st = ctx->backend->synchronize()) {
            giveBack();
            return st;
          }
      }
      ++ctx->stats.memsets;
      if (ctx->recording) record(ctx, HJ_REC_MEMSET, b, b->name);
    } else if (!zero && ctx->fillNan && bytes) {
      if (!deferInit) {
        int32_t st = ctx->injector.check("fill of %%%s", b->name);
        if (st == HJ_OK) st = ctx->backend->fill(b->ptr, bytes, nanPattern(dtype), esize);
        if (st) {
          giveBack();
          return st;
        }
      }
      ++ctx->stats.fills;
      if (ctx->recording) record(ctx, HJ_REC_FILL, b, b->name);
    }
    ctx->live.insert(b->ptr, b);
    ++ctx->stats.allocs;
    ctx->stats.live_bytes += bytes;
    if (ctx->stats.live_bytes > ctx->stats.peak_bytes) ctx->stats.peak_bytes = ctx->stats.live_bytes;
  } catch (...) {
    ctx->live.erase(b->ptr);
    giveBack();
    throw;
  }
  *out = b;
  return HJ_OK;
}

}  // namespace hj

extern "C" {

void hj_options_init(hj_options *o) {
  if (!o) return;
  std::memset(o, 0, sizeof *o);
  o->backend = HJ_BACKEND_HOST;
  o->reuse_zeroed_memory = -1;
  o->check_zeroed = -1;
  o->fill_nan = -1;
  o->sync = -1;
  o->fail_at = -1;
}

int32_t hj_context_create(const hj_options *options, hj_context **out) {
  return guarded([&]() -> int32_t {
    if (!out) return fail(HJ_ERR_INVALID_ARGUMENT, "hj_context_create: out is NULL");
    *out = nullptr;
    hj_options o;
    hj_options_init(&o);
    if (options) o = *options;
    std::unique_ptr<hj::Backend> backend;
    switch (o.backend) {
      case HJ_BACKEND_HOST: backend = hj::makeHostBackend(); break;
      case HJ_BACKEND_CUDA:
        if (int32_t st = hj::makeCudaBackend(o.device, o.stream, backend)) return st;
        break;
      case HJ_BACKEND_AUTO:
        if (hj::makeCudaBackend(o.device, o.stream, backend) != HJ_OK) backend = hj::makeHostBackend();
        hj_clear_error();
        break;
      default: return fail(HJ_ERR_INVALID_ARGUMENT, "hj_context_create: unknown backend %d", o.backend);
    }
    *out = new hj_context(std::move(backend), o, option(o.reuse_zeroed_memory, "HOSTJIT_REUSE_ZEROED_MEMORY"),
                          option(o.check_zeroed, "HOSTJIT_CHECK_ZEROED"), option(o.fill_nan, "HOSTJIT_FILL_NAN"));
    return HJ_OK;
  });
}

void hj_context_destroy(hj_context *ctx) {
  guarded([&] {
    delete ctx;
    return HJ_OK;
  });
}

int32_t hj_context_backend(const hj_context *ctx) { return ctx->backend->kind(); }

void hj_context_device(const hj_context *ctx, int32_t *type, int32_t *id) {
  if (type) *type = ctx->backend->dlDeviceType();
  if (id) *id = ctx->backend->deviceId();
}

int32_t hj_alloc(hj_context *ctx, const int64_t *sizes, const int64_t *strides, uint32_t rank, uint32_t dtype,
                 uint32_t flags, const char *name, void **out) {
  return guarded([&]() -> int32_t {
    if (!name) name = "?";
    if (int32_t st = checkContext(ctx, "hj_alloc")) return st;
    if (!out) return fail(HJ_ERR_INVALID_ARGUMENT, "hj_alloc of %%%s: out is NULL", name);
    if (rank > 0 && !sizes)
      return fail(HJ_ERR_INVALID_ARGUMENT, "hj_alloc of %%%s: sizes is NULL with rank %u", name, rank);
    if (rank > HJ_MAX_RANK)
      return fail(HJ_ERR_INVALID_ARGUMENT, "hj_alloc of %%%s: rank %u, expected at most %d", name, rank, HJ_MAX_RANK);
    hj::GraphCache::Mode mode = ctx->graphs.mode();
    if (mode != hj::GraphCache::Mode::Trace)
      if (int32_t st = ctx->backend->checkFault()) return st;
    if (mode != hj::GraphCache::Mode::Trace)
      if (int32_t st = ctx->injector.check("hj_alloc of %%%s", name)) return st;
    uint32_t esize = hj_dtype_size(dtype);
    if (esize == 0) return fail(HJ_ERR_INVALID_ARGUMENT, "buffer %%%s: unknown dtype %u", name, dtype);
    if ((flags & HJ_ALLOC_RESETS_TO_ZERO) && !(flags & HJ_ALLOC_ZERO_INIT))
      return fail(HJ_ERR_INVALID_ARGUMENT, "buffer %%%s: resets_to_zero requires zero_init", name);
    uint64_t bytes = 0;
    if (int32_t st = bufferBytes(sizes, strides, rank, esize, name, &bytes)) return st;
    if ((flags & HJ_ALLOC_OUTPUT) && (flags & HJ_ALLOC_RESETS_TO_ZERO))
      return fail(HJ_ERR_INVALID_ARGUMENT, "buffer %%%s: an output cannot be resets_to_zero", name);
    if (mode == hj::GraphCache::Mode::Trace || mode == hj::GraphCache::Mode::Replay)
      return ctx->graphs.alloc(sizes, strides, rank, dtype, flags, bytes, name, out);
    Block *b = nullptr;
    if (int32_t st = hj::allocBlock(ctx, bytes, flags, dtype, name, /*deferInit=*/false, &b)) return st;
    *out = b->ptr;
    return HJ_OK;
  });
}

int32_t hj_free(hj_context *ctx, void *ptr) {
  return guarded([&]() -> int32_t {
    if (int32_t st = checkContext(ctx, "hj_free")) return st;
    if (ctx->graphs.mode() == hj::GraphCache::Mode::Trace) return ctx->graphs.traceFree(ptr, false);
    Block *b = ctx->live.erase(ptr);
    if (!b) return fail(HJ_ERR_INVALID_ARGUMENT, "hj_free: %p is not a live buffer of this context", ptr);
    int32_t st = HJ_OK;
    try {
      if (ctx->recording) record(ctx, HJ_REC_FREE, b, b->name);
      if (b->region && ctx->checkZeroed && b->bytes) st = checkZeroedOnFree(ctx, b);
    } catch (...) {
      releaseBlock(ctx, b);  // released even when the check cannot run
      throw;
    }
    releaseBlock(ctx, b);
    return st;
  });
}

void hj_free_on_error(hj_context *ctx, void *ptr) {
  guarded([&]() -> int32_t {
    if (ctx->graphs.mode() == hj::GraphCache::Mode::Trace) return ctx->graphs.traceFree(ptr, true);
    if (Block *b = ctx->live.erase(ptr)) {
      try {
        if (ctx->recording) record(ctx, HJ_REC_FREE, b, b->name);
      } catch (...) {
        releaseBlock(ctx, b);  // the buffer is released even if the record cannot grow
        throw;
      }
      releaseBlock(ctx, b);
    }
    return HJ_OK;
  });
}

void hj_free_all_on_error(hj_context *ctx, void *const *buffers, uint32_t count) {
  for (uint32_t i = count; i-- > 0;)
    if (buffers[i]) hj_free_on_error(ctx, buffers[i]);
  if (ctx->graphs.mode() != hj::GraphCache::Mode::Trace) ctx->backend->setStream(0);
  if (ctx->comm) ctx->comm->closeGroups();  // a failed step inside a send/receive group
}

int32_t hj_launch(hj_context *ctx, const hj_kernel_table *table, uint32_t kernel, const int64_t *dims,
                  void **params, const char *site) {
  return guarded([&]() -> int32_t {
    if (int32_t st = checkContext(ctx, "hj_launch")) return st;
    hj::GraphCache::Mode mode = ctx->graphs.mode();
    if (mode != hj::GraphCache::Mode::Trace)
      if (int32_t st = ctx->backend->checkFault()) return st;
    if (!table || kernel >= table->kernels.size())
      return fail(HJ_ERR_INVALID_ARGUMENT, "hj_launch: kernel index %u is not in the kernel table", kernel);
    const hj::KernelEntry &k = table->kernels[kernel];
    if (table->backend != ctx->backend->kind() || table->device != ctx->backend->deviceId())
      return fail(HJ_ERR_INVALID_ARGUMENT, "launch of @%s: the kernel table was made for another backend or device",
                  k.name.c_str());
    if (!dims) return fail(HJ_ERR_INVALID_ARGUMENT, "launch of @%s: dims is NULL", k.name.c_str());
    if (!params && !k.params.empty())
      return fail(HJ_ERR_INVALID_ARGUMENT, "launch of @%s: params is NULL, expected %zu arguments", k.name.c_str(),
                  k.params.size());
    for (size_t i = 0; params && i < k.params.size(); ++i)
      if (!params[i])
        return fail(HJ_ERR_INVALID_ARGUMENT, "launch of @%s: params[%zu] is NULL, expected a pointer to argument %zu",
                    k.name.c_str(), i, i);
    static const char *what[] = {"grid.x", "grid.y", "grid.z", "block.x", "block.y", "block.z"};
    for (int i = 0; i < 6; ++i)
      if (dims[i] < 1 || dims[i] > HJ_MAX_GRID_DIM)
        return fail(HJ_ERR_INVALID_ARGUMENT,
                    "launch of @%s grid(%" PRId64 ", %" PRId64 ", %" PRId64 ") block(%" PRId64 ", %" PRId64
                    ", %" PRId64 "): %s is %" PRId64 ", expected 1 to 2147483647",
                    k.name.c_str(), dims[0], dims[1], dims[2], dims[3], dims[4], dims[5], what[i], dims[i]);
    if (dims[3] > HJ_MAX_BLOCK_THREADS || dims[4] > HJ_MAX_BLOCK_THREADS || dims[5] > HJ_MAX_BLOCK_THREADS ||
        dims[3] * dims[4] * dims[5] > HJ_MAX_BLOCK_THREADS)
      return fail(HJ_ERR_INVALID_ARGUMENT, "launch of @%s: block(%" PRId64 ", %" PRId64 ", %" PRId64
                  ") has more than %d threads", k.name.c_str(), dims[3], dims[4], dims[5], HJ_MAX_BLOCK_THREADS);
    if (dims[6] < 0 || dims[6] > HJ_MAX_SMEM_BYTES)
      return fail(HJ_ERR_INVALID_ARGUMENT, "launch of @%s: smem is %" PRId64 ", expected 0 to 2147483647",
                  k.name.c_str(), dims[6]);
    if (mode == hj::GraphCache::Mode::Trace) return ctx->graphs.launch(table, kernel, dims, params);
    if (int32_t st = ctx->injector.check("launch of @%s (%s)", k.name.c_str(), site && *site ? site : "no site given"))
      return st;
    if (ctx->recording || ctx->checkZeroed) {
      // Built aside and appended whole, so running out of memory half-way
      // leaves no half-made entry in the record.
      hj::RecordedCall call;
      hj::RecordedCall *c = nullptr;
      if (ctx->recording) {
        c = &call;
        c->entry.kind = HJ_REC_LAUNCH;
        c->entry.stream = hj::programStream(ctx);
        c->name = k.name;
        c->entry.kernel = kernel;
        std::memcpy(c->entry.dims, dims, sizeof c->entry.dims);
      }
      for (size_t i = 0; i < k.params.size(); ++i) {
        int32_t kind = k.params[i];
        bool tensor = (kind & 0xff) == HJ_PARAM_TENSOR;
        hj_record_arg a{kind, 0, 0, 0, nullptr};
        std::memcpy(&a.value, params[i], tensor ? sizeof(void *) : paramBytes(kind));
        if (tensor && c) {
          const auto *dims = reinterpret_cast<const int64_t *>(static_cast<const char *>(params[i]) + sizeof(void *));
          a.offset = c->dims.size();  // fixed up to a pointer once all args are in
          c->dims.insert(c->dims.end(), dims, dims + 2 * hj_param_rank(kind));
        }
        if (kind == HJ_PARAM_PTR || tensor) {
          void *p = *static_cast<void **>(params[i]);
          if (Block *b = ctx->live.find(p)) {
            a.is_buffer = 1;
            a.value = b->id;
            if (b->region || b->planned >= 0) {
              std::strncpy(b->lastKernel, k.name.c_str(), sizeof b->lastKernel - 1);
              b->lastKernel[sizeof b->lastKernel - 1] = '\0';
            }
          }
        }
        if (c) c->args.push_back(a);
      }
      if (c) {
        for (hj_record_arg &a : c->args)
          if ((a.kind & 0xff) == HJ_PARAM_TENSOR) {
            a.dims = c->dims.data() + a.offset;  // the heap block moves with the vector
            a.offset = 0;
          }
        ctx->record.push_back(std::move(call));
      }
    }
    if (mode == hj::GraphCache::Mode::Replay) {
      if (int32_t st = ctx->graphs.launch(table, kernel, dims, params)) return st;
      ++ctx->stats.launches;
      return HJ_OK;
    }
    hj_dim3 grid{uint32_t(dims[0]), uint32_t(dims[1]), uint32_t(dims[2])};
    hj_dim3 block{uint32_t(dims[3]), uint32_t(dims[4]), uint32_t(dims[5])};
    if (int32_t st = ctx->backend->launch(k, grid, block, uint32_t(dims[6]), params)) return st;
    ++ctx->stats.launches;
    if (ctx->sync && ctx->backend->synchronize() != HJ_OK) {
      if (ctx->backend->fault().empty()) return HJ_ERR_BACKEND;  // the synchronisation's own error is set
      return fail(HJ_ERR_BACKEND,
                  "kernel @%s (%s) failed on the device: %s; this context can no longer be used: destroy it, and "
                  "the programs and kernel tables made on it, and create a new one",
                  k.name.c_str(), site && *site ? site : "no site given", ctx->backend->fault().c_str());
    }
    return HJ_OK;
  });
}

int32_t hj_fail(hj_context *, int32_t status, const char *message) {
  int32_t st = guarded([&] { return fail(status, "%s", message ? message : "error"); });
  return st == HJ_ERR_OUT_OF_MEMORY && status != HJ_ERR_OUT_OF_MEMORY ? status : st;
}

int32_t hj_register_host_kernel(hj_context *ctx, const char *name, hj_host_kernel_fn fn) {
  return guarded([&] {
    if (int32_t st = checkContext(ctx, "hj_register_host_kernel")) return st;
    return ctx->backend->registerHostKernel(name, fn);
  });
}

int32_t hj_load_host_library(hj_context *ctx, const char *path) {
  return guarded([&] {
    if (int32_t st = checkContext(ctx, "hj_load_host_library")) return st;
    return ctx->backend->loadHostLibrary(path);
  });
}

int32_t hj_kernel_table_create(hj_context *ctx, const hj_kernel_desc *kernels, uint32_t count, hj_kernel_table **out) {
  return guarded([&]() -> int32_t {
    if (int32_t st = checkContext(ctx, "hj_kernel_table_create")) return st;
    if (!out) return fail(HJ_ERR_INVALID_ARGUMENT, "hj_kernel_table_create: out is NULL");
    *out = nullptr;
    if (int32_t st = ctx->backend->checkFault()) return st;
    auto table = std::make_unique<hj_kernel_table>();
    table->backend = ctx->backend->kind();
    table->device = ctx->backend->deviceId();
    for (uint32_t i = 0; i < count; ++i) {
      const hj_kernel_desc &d = kernels[i];
      hj::KernelEntry &e = table->kernels.emplace_back();
      e.name = d.name ? d.name : "?";
      e.params.assign(d.params, d.params + d.num_params);
      for (int32_t p : e.params)
        if (paramBytes(p) == 0)
          return fail(HJ_ERR_INVALID_ARGUMENT, "kernel @%s: unknown parameter kind %d", e.name.c_str(), p);
      if (int32_t st = ctx->injector.check("loading kernel @%s", d.name ? d.name : "?")) return st;
      if (int32_t st = ctx->backend->loadKernel(d, e)) return st;
    }
    table->keepAlive = ctx->backend->keepAlive();
    *out = table.release();
    return HJ_OK;
  });
}

void hj_kernel_table_destroy(hj_kernel_table *table) {
  guarded([&] {
    delete table;
    return HJ_OK;
  });
}

int32_t hj_kernel_table_native(const hj_kernel_table *table, uint32_t index, void **handle) {
  if (!table || index >= table->kernels.size())
    return fail(HJ_ERR_INVALID_ARGUMENT, "hj_kernel_table_native: index %u is not in the table", index);
  const hj::KernelEntry &k = table->kernels[index];
  *handle = table->backend == HJ_BACKEND_CUDA ? k.function : reinterpret_cast<void *>(k.host);
  return HJ_OK;
}

void *hj_context_native_stream(const hj_context *ctx) { return ctx->backend->nativeStream(); }

void hj_get_stats(const hj_context *ctx, hj_stats *out) { *out = ctx->stats; }

void hj_inject_failure(hj_context *ctx, uint64_t n) { ctx->injector.arm(n); }

void hj_reset_stats(hj_context *ctx) {
  hj_stats &s = ctx->stats;
  s.allocs = s.frees = s.memsets = s.fills = s.launches = s.backend_allocs = s.backend_frees = s.arena_growths =
      s.pool_hits = s.fallible_ops = 0;
  s.graph_builds = s.graph_replays = s.graph_fast = s.graph_updates = s.graph_fallbacks = s.graph_evictions = 0;
  s.event_records = s.event_waits = s.deferred_frees = s.collectives = s.collective_bytes = 0;
  s.peak_bytes = s.live_bytes;
}

void hj_record_enable(hj_context *ctx, int32_t on) {
  ctx->recording = on != 0;
  if (ctx->recording) {
    ctx->record.clear();
    ctx->nextBufferId = 1;
  }
}

uint64_t hj_record_size(const hj_context *ctx) { return ctx->record.size(); }

int32_t hj_record_get(const hj_context *ctx, uint64_t index, hj_record_entry *out) {
  if (index >= ctx->record.size())
    return fail(HJ_ERR_INVALID_ARGUMENT, "hj_record_get: index %llu out of range",
                static_cast<unsigned long long>(index));
  const hj::RecordedCall &c = ctx->record[index];
  *out = c.entry;
  out->name = c.name.c_str();
  out->num_args = static_cast<uint32_t>(c.args.size());
  out->args = c.args.data();
  return HJ_OK;
}

static int64_t recordFormat(const hj_context *ctx, uint64_t index, char *buf, uint64_t cap) {
  if (index >= ctx->record.size()) return -1;
  const hj::RecordedCall &c = ctx->record[index];
  const hj_record_entry &e = c.entry;
  std::string s;
  char tmp[256];
  switch (e.kind) {
    case HJ_REC_ALLOC:
      std::snprintf(tmp, sizeof tmp, "alloc #%llu %%%s %s bytes=%llu%s%s%s", (unsigned long long)e.buffer,
                    c.name.c_str(), dtypeName(e.dtype), (unsigned long long)e.bytes,
                    (e.flags & HJ_ALLOC_ZERO_INIT) ? " zero_init" : "",
                    (e.flags & HJ_ALLOC_RESETS_TO_ZERO) ? " resets_to_zero" : "",
                    (e.flags & HJ_ALLOC_OUTPUT) ? " output" : "");
      s = tmp;
      break;
    case HJ_REC_FREE:
      std::snprintf(tmp, sizeof tmp, "free #%llu %%%s", (unsigned long long)e.buffer, c.name.c_str());
      s = tmp;
      break;
    case HJ_REC_MEMSET:
    case HJ_REC_FILL:
      std::snprintf(tmp, sizeof tmp, "%s #%llu %%%s bytes=%llu", e.kind == HJ_REC_MEMSET ? "memset" : "fill",
                    (unsigned long long)e.buffer, c.name.c_str(), (unsigned long long)e.bytes);
      s = tmp;
      break;
    case HJ_REC_STREAM:
      std::snprintf(tmp, sizeof tmp, "stream %u", e.index);
      s = tmp;
      break;
    case HJ_REC_EVENT_RECORD:
    case HJ_REC_EVENT_WAIT:
      std::snprintf(tmp, sizeof tmp, "%s event %u", e.kind == HJ_REC_EVENT_RECORD ? "record" : "wait", e.index);
      s = tmp;
      break;
    case HJ_REC_SYNC: s = "sync"; break;
    case HJ_REC_COLLECTIVE:
      std::snprintf(tmp, sizeof tmp, "%s%s%s %s bytes=%llu", hj::collectiveName(e.index),
                    e.index == HJ_COLL_ALL_REDUCE || e.index == HJ_COLL_REDUCE_SCATTER ? " " : "",
                    e.index == HJ_COLL_ALL_REDUCE || e.index == HJ_COLL_REDUCE_SCATTER ? hj::reduceOpName(e.flags) : "",
                    dtypeName(e.dtype), (unsigned long long)e.bytes);
      s = tmp;
      if (e.index >= HJ_COLL_BROADCAST) s += (e.index == HJ_COLL_BROADCAST ? " root " : " peer ") + std::to_string(e.kernel);
      break;
    case HJ_REC_USE:
      std::snprintf(tmp, sizeof tmp, "use #%llu %%%s", (unsigned long long)e.buffer, c.name.c_str());
      s = tmp;
      break;
    case HJ_REC_LAUNCH: {
      std::snprintf(tmp, sizeof tmp,
                    "launch @%s grid(%" PRId64 ", %" PRId64 ", %" PRId64 ") block(%" PRId64 ", %" PRId64 ", %" PRId64
                    ") smem(%" PRId64 ") (",
                    c.name.c_str(), e.dims[0], e.dims[1], e.dims[2], e.dims[3], e.dims[4], e.dims[5], e.dims[6]);
      s = tmp;
      for (size_t i = 0; i < c.args.size(); ++i) {
        const hj_record_arg &a = c.args[i];
        if (i) s += ", ";
        if (a.is_buffer) {
          std::snprintf(tmp, sizeof tmp, "#%llu", (unsigned long long)a.value);
        } else if ((a.kind & 0xff) == HJ_PARAM_TENSOR) {
          std::snprintf(tmp, sizeof tmp, "ptr 0x%llx", (unsigned long long)a.value);
        } else {
          switch (a.kind) {
            case HJ_PARAM_PTR: std::snprintf(tmp, sizeof tmp, "ptr 0x%llx", (unsigned long long)a.value); break;
            case HJ_PARAM_I32: std::snprintf(tmp, sizeof tmp, "i32 %d", int32_t(uint32_t(a.value))); break;
            case HJ_PARAM_I64: std::snprintf(tmp, sizeof tmp, "i64 %lld", (long long)a.value); break;
            case HJ_PARAM_F32: {
              float f;
              uint32_t bits = uint32_t(a.value);
              std::memcpy(&f, &bits, 4);
              std::snprintf(tmp, sizeof tmp, "f32 %.9g [0x%08x]", f, bits);
              break;
            }
            case HJ_PARAM_F64: {
              double f;
              std::memcpy(&f, &a.value, 8);
              std::snprintf(tmp, sizeof tmp, "f64 %.17g [0x%016llx]", f, (unsigned long long)a.value);
              break;
            }
            default: std::snprintf(tmp, sizeof tmp, "bool %d", int(a.value & 1)); break;
          }
        }
        s += tmp;
        if ((a.kind & 0xff) == HJ_PARAM_TENSOR) {
          uint32_t rank = hj_param_rank(a.kind);
          s += " sizes[";
          for (uint32_t d = 0; d < rank; ++d) s += (d ? ", " : "") + std::to_string(a.dims[d]);
          s += "] strides[";
          for (uint32_t d = 0; d < rank; ++d) s += (d ? ", " : "") + std::to_string(a.dims[rank + d]);
          s += "]";
        }
      }
      s += ")";
      break;
    }
  }
  if (e.stream != 0 && e.kind != HJ_REC_STREAM) s += " on stream " + std::to_string(e.stream);
  if (buf && cap) {
    size_t n = std::min<size_t>(s.size(), cap - 1);
    std::memcpy(buf, s.data(), n);
    buf[n] = '\0';
  }
  return static_cast<int64_t>(s.size());
}

int64_t hj_record_format(const hj_context *ctx, uint64_t index, char *buf, uint64_t cap) {
  try {
    return recordFormat(ctx, index, buf, cap);
  } catch (...) {
    fail(HJ_ERR_OUT_OF_MEMORY, "hj_record_format: host memory exhausted");
    return -1;
  }
}

int32_t hj_empty_cache(hj_context *ctx) {
  return guarded([&] {
    if (!ctx->streams.deferred.empty()) {
      (void)ctx->backend->synchronize();
      hj::pollDeferred(ctx);
    }
    ctx->pool.emptyCache();
    return HJ_OK;
  });
}

int32_t hj_synchronize(hj_context *ctx) {
  return guarded([&] {
    if (int32_t st = checkContext(ctx, "hj_synchronize")) return st;
    return ctx->backend->synchronize();
  });
}

int32_t hj_buffer_alloc(hj_context *ctx, uint64_t bytes, void **out) {
  return guarded([&] {
    if (int32_t st = checkContext(ctx, "hj_buffer_alloc")) return st;
    if (int32_t st = ctx->backend->checkFault()) return st;
    return ctx->backend->allocate(bytes, out);
  });
}

void hj_buffer_free(hj_context *ctx, void *ptr) {
  guarded([&] {
    if (ptr) ctx->backend->release(ptr);
    return HJ_OK;
  });
}

int32_t hj_copy_to_host(hj_context *ctx, void *dst, const void *src, uint64_t bytes) {
  return guarded([&]() -> int32_t {
    if (int32_t st = checkContext(ctx, "hj_copy_to_host")) return st;
    if (int32_t st = ctx->backend->synchronize()) return st;
    return ctx->backend->copyToHost(dst, src, bytes);
  });
}

int32_t hj_copy_from_host(hj_context *ctx, void *dst, const void *src, uint64_t bytes) {
  return guarded([&] {
    if (int32_t st = checkContext(ctx, "hj_copy_from_host")) return st;
    if (int32_t st = ctx->backend->checkFault()) return st;
    return ctx->backend->copyFromHost(dst, src, bytes);
  });
}

int32_t hj_arena_check_zero(hj_context *ctx, int32_t *isZero) {
  return guarded([&]() -> int32_t {
    bool z = true;
    int32_t st = ctx->arenas.checkZero(&z);
    if (st == HJ_OK && z) st = ctx->graphs.checkZero(&z);
    *isZero = z ? 1 : 0;
    return st;
  });
}

}  // extern "C"
