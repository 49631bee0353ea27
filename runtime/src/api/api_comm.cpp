// comm_api.cpp - the communicator entry points: unique ids, joining,
// aborting, rank and world, and hj_collective.
#include <cinttypes>
#include <cstdio>
#include <string>

#include "base/error.h"
#include "core/context.h"

using hj::checkContext;
using hj::fail;
using hj::guarded;

int32_t hj_comm_unique_id(int32_t backend, hj_comm_id *out) {
  return guarded([&]() -> int32_t {
    if (!out) return fail(HJ_ERR_INVALID_ARGUMENT, "hj_comm_unique_id: out is NULL");
    if (backend == HJ_BACKEND_HOST) return hj::hostCommUniqueId(out);
    if (backend == HJ_BACKEND_CUDA) return hj::ncclCommUniqueId(out);
    return fail(HJ_ERR_INVALID_ARGUMENT, "hj_comm_unique_id: backend %d is neither host (0) nor CUDA (1)", backend);
  });
}

int32_t hj_comm_init(hj_context *ctx, const hj_comm_id *id, int32_t world, int32_t rank) {
  return guarded([&]() -> int32_t {
    if (int32_t st = checkContext(ctx, "hj_comm_init")) return st;
    if (!id) return fail(HJ_ERR_INVALID_ARGUMENT, "hj_comm_init: id is NULL");
    if (world < 1) return fail(HJ_ERR_INVALID_ARGUMENT, "hj_comm_init: world is %d, expected at least 1", world);
    if (rank < 0 || rank >= world)
      return fail(HJ_ERR_INVALID_ARGUMENT, "hj_comm_init: rank %d, expected 0 to %d", rank, world - 1);
    if (ctx->comm) return fail(HJ_ERR_INVALID_ARGUMENT, "hj_comm_init: the context is already rank %d of %d",
                               ctx->comm->rank(), ctx->comm->world());
    if (int32_t st = ctx->backend->checkFault()) return st;
    std::unique_ptr<hj::Comm> c;
    if (int32_t st = ctx->backend->makeComm(*id, world, rank, ctx->settings.commTimeout,
                                                  ctx->settings.commTimeoutGiven, c)) return st;
    ctx->comm = std::move(c);
    return HJ_OK;
  });
}

void hj_comm_abort(hj_context *ctx, const char *reason) {
  guarded([&]() -> int32_t {
    if (checkContext(ctx, "hj_comm_abort") != HJ_OK || !ctx->comm) return HJ_OK;
    ctx->graphs.dropCommunicating();
    ctx->comm->abort(reason ? reason : "no reason given");
    return HJ_OK;
  });
}

int64_t hj_comm_rank(const hj_context *ctx) { return ctx && ctx->comm ? ctx->comm->rank() : 0; }

int64_t hj_comm_world(const hj_context *ctx) { return ctx && ctx->comm ? ctx->comm->world() : 1; }

namespace {

// Checks a call of hj_collective (whatever the mode), then has the context's
// call path make it.
int32_t collective(hj_context *ctx, uint32_t kind, const void *src, uint64_t srcElems, void *dst, uint64_t dstElems,
                   uint64_t count, uint32_t dtype, uint32_t op, int64_t peer, const std::string &what,
                   const char *site) {
  hj::Comm &comm = *ctx->comm;
  bool bracket = kind >= HJ_COLL_GROUP_BEGIN;
  uint32_t esize = hj_dtype_size(dtype);
  if (!bracket && esize == 0) return fail(HJ_ERR_INVALID_ARGUMENT, "%s: unknown dtype %u", what.c_str(), dtype);
  if (op > HJ_REDUCE_MIN) return fail(HJ_ERR_INVALID_ARGUMENT, "%s: unknown reduction %u", what.c_str(), op);
  int32_t rank = comm.rank(), world = comm.world();
  if ((kind == HJ_COLL_BROADCAST || kind == HJ_COLL_SEND || kind == HJ_COLL_RECV) && (peer < 0 || peer >= world))
    return fail(HJ_ERR_INVALID_ARGUMENT, "rank %d: %s: %s %" PRId64 " is not a rank (0 to %d)", rank, what.c_str(),
                kind == HJ_COLL_BROADCAST ? "root" : "peer", peer, world - 1);
  if ((kind == HJ_COLL_SEND || kind == HJ_COLL_RECV) && peer == rank)
    return fail(HJ_ERR_INVALID_ARGUMENT, "rank %d: %s: a rank cannot %s itself", rank, what.c_str(),
                kind == HJ_COLL_SEND ? "send to" : "receive from");
  // What the call reads from src and writes to dst, in elements.
  uint64_t in = count, out = count;
  if (kind == HJ_COLL_ALL_GATHER) out = count * static_cast<uint64_t>(world);
  if (kind == HJ_COLL_REDUCE_SCATTER) in = count * static_cast<uint64_t>(world);
  if (!bracket) {
    if (kind != HJ_COLL_RECV && srcElems < in)
      return fail(HJ_ERR_INVALID_ARGUMENT, "rank %d: %s: the source holds %llu elements, the call reads %llu", rank,
                  what.c_str(), (unsigned long long)srcElems, (unsigned long long)in);
    if (kind != HJ_COLL_SEND && dstElems < out)
      return fail(HJ_ERR_INVALID_ARGUMENT, "rank %d: %s: the destination holds %llu elements, the call writes %llu",
                  rank, what.c_str(), (unsigned long long)dstElems, (unsigned long long)out);
  }
  hj::CollectiveCall c;
  c.kind = kind;
  c.src = src;
  c.dst = dst;
  c.count = count;
  c.dtype = dtype;
  c.op = op;
  c.peer = static_cast<int32_t>(peer);
  c.bytes = bracket ? 0 : kind == HJ_COLL_ALL_GATHER ? count * esize : in * esize;
  c.recordBytes = count * esize;
  c.what = &what;
  c.site = site;
  return ctx->path->collective(c);
}

}  // namespace

int32_t hj_collective(hj_context *ctx, uint32_t kind, const void *src, uint64_t src_elems, void *dst,
                      uint64_t dst_elems, uint64_t count, uint32_t dtype, uint32_t op, int64_t peer, const char *site) {
  return guarded([&]() -> int32_t {
    if (int32_t st = checkContext(ctx, "hj_collective")) return st;
    if (kind > HJ_COLL_GROUP_END) return fail(HJ_ERR_INVALID_ARGUMENT, "hj_collective: unknown kind %u", kind);
    char buf[512];
    std::snprintf(buf, sizeof buf, "%s (%s)", hj::collectiveName(kind), site && *site ? site : "no site given");
    std::string what = buf;
    if (!ctx->comm)
      return fail(HJ_ERR_INVALID_ARGUMENT,
                  "%s: the context has no communicator: give it one with hj_comm_init (or run with --ranks N)",
                  what.c_str());
    // Every failure, an exception included, aborts the communicator (the
    // other ranks must not wait for this one) and ends this rank's groups.
    int32_t st;
    try {
      st = collective(ctx, kind, src, src_elems, dst, dst_elems, count, dtype, op, peer, what, site ? site : "");
    } catch (...) {
      ctx->comm->abort("rank " + std::to_string(ctx->comm->rank()) + ": " + what + " failed: out of host memory");
      ctx->comm->closeGroups();
      throw;
    }
    if (st != HJ_OK && ctx->path->rerunsOnFailure()) return st;  // nothing communicated: the call is rerun eagerly
    if (st != HJ_OK) {
      std::string msg = hj_last_error();
      // NCCL's abort waits for the graphs its work was captured into: they
      // go first (graph mode's paths drop them themselves, in abortComm).
      if (!ctx->path->dropsGraphsOnAbort()) ctx->graphs.dropCommunicating();
      ctx->comm->abort(msg);
      ctx->comm->closeGroups();
      return fail(st, "%s", msg.c_str());
    }
    return HJ_OK;
  });
}
