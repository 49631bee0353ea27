// nccl_comm.cpp - the CUDA backend's communicators: NCCL, opened with
// dlopen("libnccl.so.2") on first use, as the driver is, so a binary without
// NCCL runs every single-GPU program and says "no NCCL" only when a program
// communicates.
#include <dlfcn.h>

#include <cstring>
#include <mutex>

#include "comm/comm.h"
#include "base/error.h"

namespace hj {

namespace {

// The types of nccl.h that nccl_api.def uses (values as in NCCL 2.x).
typedef struct ncclComm *ncclComm_t;
typedef struct {
  char internal[128];
} ncclUniqueId;
typedef enum { ncclSuccess = 0, ncclInProgress = 7 } ncclResult_t;
typedef enum {
  ncclInt8 = 0,
  ncclUint8 = 1,
  ncclInt32 = 2,
  ncclUint32 = 3,
  ncclInt64 = 4,
  ncclUint64 = 5,
  ncclFloat16 = 6,
  ncclFloat32 = 7,
  ncclFloat64 = 8,
  ncclBfloat16 = 9
} ncclDataType_t;
typedef enum { ncclSum = 0, ncclProd = 1, ncclMax = 2, ncclMin = 3 } ncclRedOp_t;
static_assert(sizeof(ncclUniqueId) == sizeof(hj_comm_id), "an hj_comm_id holds an ncclUniqueId");

struct Nccl {
#define HJ_NCCL_FN(ret, sym, params) ret(*sym) params = nullptr;
#include "comm/nccl_api.def"
#undef HJ_NCCL_FN
  std::string error;  // why NCCL cannot be used
  int version = 0;
};

const Nccl &nccl() {
  static Nccl n = [] {
    Nccl r;
    void *lib = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      const char *e = dlerror();
      r.error = std::string("no NCCL: libnccl.so.2 cannot be loaded (") + (e ? e : "not found") +
                "); install NCCL or add its directory to LD_LIBRARY_PATH";
      return r;
    }
#define HJ_NCCL_FN(ret, sym, params)                                                                \
  r.sym = reinterpret_cast<ret(*) params>(dlsym(lib, #sym));                                         \
  if (!r.sym) {                                                                                      \
    r.error = "no usable NCCL: libnccl.so.2 does not export " #sym;                                  \
    return r;                                                                                        \
  }
#include "comm/nccl_api.def"
#undef HJ_NCCL_FN
    r.ncclGetVersion(&r.version);
    return r;
  }();
  return n;
}

bool ncclType(uint32_t dtype, ncclDataType_t *out) {
  switch (dtype) {
    case HJ_DTYPE_i8: *out = ncclInt8; return true;
    case HJ_DTYPE_u8: *out = ncclUint8; return true;
    case HJ_DTYPE_i32: *out = ncclInt32; return true;
    case HJ_DTYPE_u32: *out = ncclUint32; return true;
    case HJ_DTYPE_i64: *out = ncclInt64; return true;
    case HJ_DTYPE_u64: *out = ncclUint64; return true;
    case HJ_DTYPE_f16: *out = ncclFloat16; return true;
    case HJ_DTYPE_f32: *out = ncclFloat32; return true;
    case HJ_DTYPE_f64: *out = ncclFloat64; return true;
    case HJ_DTYPE_bf16: *out = ncclBfloat16; return true;
    default: return false;
  }
}

class NcclComm final : public Comm {
 public:
  NcclComm(ncclComm_t c, int32_t rank, int32_t world) : Comm(rank, world), c_(c) {}
  // Frees this rank's side without waiting for the others (ncclCommDestroy
  // finalizes, which waits for peers: ranks destroyed one after another by
  // one thread would hang). The context has drained its streams first.
  ~NcclComm() override {
    if (aborted_) return;  // ncclCommAbort freed it
    nccl().ncclCommAbort(c_);
  }

  int32_t run(uint32_t kind, const void *src, void *dst, uint64_t count, uint32_t dtype, uint32_t op, int32_t peer,
              void *stream, const std::string &what) override {
    const Nccl &n = nccl();
    std::lock_guard<std::mutex> l(m_);  // abort() may come from another thread: not while c_ is in use
    if (aborted_) return fail(HJ_ERR_BACKEND, "rank %d: %s: the communicator was aborted", rank(), what.c_str());
    ncclDataType_t t = ncclFloat32;
    if (kind < HJ_COLL_GROUP_BEGIN && !ncclType(dtype, &t))
      return fail(HJ_ERR_INVALID_ARGUMENT, "rank %d: %s: NCCL does not move this dtype (%u)", rank(), what.c_str(),
                  dtype);
    auto rop = static_cast<ncclRedOp_t>(op);
    ncclResult_t r = ncclSuccess;
    switch (kind) {
      case HJ_COLL_ALL_REDUCE: r = n.ncclAllReduce(src, dst, count, t, rop, c_, stream); break;
      case HJ_COLL_ALL_GATHER: r = n.ncclAllGather(src, dst, count, t, c_, stream); break;
      case HJ_COLL_REDUCE_SCATTER: r = n.ncclReduceScatter(src, dst, count, t, rop, c_, stream); break;
      case HJ_COLL_BROADCAST: r = n.ncclBroadcast(src, dst, count, t, peer, c_, stream); break;
      case HJ_COLL_SEND: r = n.ncclSend(src, count, t, peer, c_, stream); break;
      case HJ_COLL_RECV: r = n.ncclRecv(dst, count, t, peer, c_, stream); break;
      case HJ_COLL_GROUP_BEGIN:
        r = n.ncclGroupStart();
        if (r == ncclSuccess) ++groupDepth_;
        break;
      case HJ_COLL_GROUP_END:
        r = n.ncclGroupEnd();
        if (groupDepth_ > 0) --groupDepth_;
        break;
      default: return fail(HJ_ERR_INVALID_ARGUMENT, "rank %d: %s: unknown collective %u", rank(), what.c_str(), kind);
    }
    if (r == ncclSuccess) {
      ncclResult_t async = ncclSuccess;
      if (n.ncclCommGetAsyncError(c_, &async) == ncclSuccess && async != ncclSuccess && async != ncclInProgress) r = async;
    }
    if (r != ncclSuccess && r != ncclInProgress)
      return fail(HJ_ERR_BACKEND, "rank %d: %s failed in NCCL: %s", rank(), what.c_str(), n.ncclGetErrorString(r));
    return HJ_OK;
  }

  void closeGroups() override {
    std::lock_guard<std::mutex> l(m_);
    for (; groupDepth_ > 0; --groupDepth_) nccl().ncclGroupEnd();
  }

  void abort(const std::string &) override {
    std::lock_guard<std::mutex> l(m_);
    if (aborted_) return;
    aborted_ = true;
    nccl().ncclCommAbort(c_);
  }

 private:
  ncclComm_t c_;
  std::mutex m_;
  bool aborted_ = false;
  int groupDepth_ = 0;  // ncclGroupStart calls not yet ended
};

}  // namespace

int32_t ncclCommUniqueId(hj_comm_id *out) {
  const Nccl &n = nccl();
  if (!n.error.empty()) return fail(HJ_ERR_NOT_FOUND, "%s", n.error.c_str());
  ncclUniqueId id;
  if (ncclResult_t r = n.ncclGetUniqueId(&id))
    return fail(HJ_ERR_BACKEND, "ncclGetUniqueId failed: %s", n.ncclGetErrorString(r));
  std::memcpy(out->bytes, id.internal, sizeof id.internal);
  return HJ_OK;
}

int32_t makeNcclComm(const hj_comm_id &id, int32_t world, int32_t rank, std::unique_ptr<Comm> &out) {
  const Nccl &n = nccl();
  if (!n.error.empty()) return fail(HJ_ERR_NOT_FOUND, "%s", n.error.c_str());
  ncclUniqueId nid;
  std::memcpy(nid.internal, id.bytes, sizeof nid.internal);
  ncclComm_t c = nullptr;
  if (ncclResult_t r = n.ncclCommInitRank(&c, world, nid, rank))
    return fail(HJ_ERR_BACKEND, "rank %d: ncclCommInitRank of %d ranks failed: %s", rank, world,
                n.ncclGetErrorString(r));
  out = std::make_unique<NcclComm>(c, rank, world);
  return HJ_OK;
}

}  // namespace hj
