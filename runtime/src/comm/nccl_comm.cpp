// nccl_comm.cpp - the CUDA backend's communicators: NCCL, opened with
// dlopen("libnccl.so.2") on first use, as the driver is, so a binary without
// NCCL runs every single-GPU program and says "no NCCL" only when a program
// communicates.

#include <chrono>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>

#include "comm/comm.h"
#include "comm/watchdog.h"
#include "base/error.h"
#include "base/shared_library.h"

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
// The part of nccl.h's ncclConfig_t that NCCL 2.17 knew. NCCL copies `size`
// bytes of it and gives the fields of later versions than `version` their
// defaults, so this prefix is a complete configuration for every NCCL since.
typedef struct {
  size_t size;
  unsigned int magic, version;
  int blocking, cgaClusterSize, minCTAs, maxCTAs;
  const char *netName;
  int splitShare;
} ncclConfig_t;
constexpr unsigned kNcclConfigMagic = 0xcafebeef;  // NCCL_API_MAGIC
constexpr unsigned kNcclConfigVersion = 21700;    // NCCL_VERSION(2, 17, 0)

struct Nccl {
#define HJ_NCCL_FN(ret, sym, params) ret(*sym) params = nullptr;
#include "comm/nccl_api.def"
#undef HJ_NCCL_FN
  // Optional: non-blocking communicators (NCCL 2.14) and error messages (2.13).
  ncclResult_t (*ncclCommInitRankConfig)(ncclComm_t *, int, ncclUniqueId, int, ncclConfig_t *) = nullptr;
  const char *(*ncclGetLastError)(ncclComm_t) = nullptr;
  std::string error;  // why NCCL cannot be used
  int version = 0;
};

const Nccl &nccl() {
  static Nccl n = [] {
    Nccl r;
    OpenedLibrary opened = openLibrary({"libnccl.so.2"});
    void *lib = opened.handle;
    if (!lib) {
      r.error = "no NCCL: libnccl.so.2 cannot be loaded (" + opened.firstError +
                "); install NCCL or add its directory to LD_LIBRARY_PATH";
      return r;
    }
#define HJ_NCCL_FN(ret, sym, params)                                                                \
  r.sym = librarySymbol<ret(*) params>(lib, #sym);                                                   \
  if (!r.sym) {                                                                                      \
    r.error = "no usable NCCL: libnccl.so.2 does not export " #sym;                                  \
    return r;                                                                                        \
  }
#include "comm/nccl_api.def"
#undef HJ_NCCL_FN
    r.ncclGetVersion(&r.version);
    r.ncclCommInitRankConfig = librarySymbol<decltype(r.ncclCommInitRankConfig)>(lib, "ncclCommInitRankConfig");
    r.ncclGetLastError = librarySymbol<decltype(r.ncclGetLastError)>(lib, "ncclGetLastError");
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

// How a non-blocking call's work in NCCL's threads is waited for: a few
// thousand yields (a launch takes tens of microseconds), then sleeps.
void pause(int round) {
  if (round < 2000)
    std::this_thread::yield();
  else
    std::this_thread::sleep_for(std::chrono::microseconds(200));
}

// NCCL's error and its last message, for errors.
std::string ncclError(const Nccl &n, ncclComm_t c, ncclResult_t r) {
  std::string s = n.ncclGetErrorString(r);
  if (n.ncclGetLastError && c)
    if (const char *last = n.ncclGetLastError(c); last && *last) s += std::string(" (") + last + ")";
  return s;
}

class NcclComm final : public Comm {
 public:
  // `timeout` finite: c is non-blocking and a watchdog watches its work.
  NcclComm(ncclComm_t c, int32_t rank, int32_t world, double timeout, std::unique_ptr<CommDevice> device)
      : Comm(rank, world), c_(c), timeout_(timeout), device_(std::move(device)) {
    if (std::isfinite(timeout_) && device_)
      dog_ = std::make_unique<Watchdog>(rank, world, timeout_,
                                        Watchdog::Hooks{[this](void *e) { return device_->query(e); },
                                                        [this] { return asyncError(); },
                                                        [this](const std::string &m) { expire(m); }});
  }
  // Frees this rank's side without waiting for the others (ncclCommDestroy
  // finalizes, which waits for peers: ranks destroyed one after another by
  // one thread would hang). The context has drained its streams and dropped
  // its graphs first, so an abort the watchdog began can end.
  ~NcclComm() override {
    if (dog_) dog_->stop();
    bool aborted;
    {
      std::lock_guard<std::mutex> l(m_);
      aborted = aborted_;
      aborted_ = true;
    }
    if (!aborted) nccl().ncclCommAbort(c_);
    if (dog_) dog_->drain([this](void *e) { device_->destroyEvent(e); });
  }

  int32_t run(uint32_t kind, const void *src, void *dst, uint64_t count, uint32_t dtype, uint32_t op, int32_t peer,
              void *stream, bool captured, const std::string &what) override {
    const Nccl &n = nccl();
    std::lock_guard<std::mutex> l(m_);  // the watchdog and abort(): not while c_ is in use
    if (aborted_)
      return fail(HJ_ERR_BACKEND, "rank %d: %s: the communicator was aborted (%s)", rank(), what.c_str(),
                  reason_.c_str());
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
        if (r == ncclSuccess && groupDepth_++ == 0) groupFirst_.clear();
        break;
      case HJ_COLL_GROUP_END:
        r = n.ncclGroupEnd();
        if (groupDepth_ > 0) --groupDepth_;
        break;
      default: return fail(HJ_ERR_INVALID_ARGUMENT, "rank %d: %s: unknown collective %u", rank(), what.c_str(), kind);
    }
    if (r == ncclSuccess || r == ncclInProgress) r = settle(r);
    if (r == kTimedOut)
      return fail(HJ_ERR_BACKEND, "rank %d: %s: NCCL did not finish queuing it within the communicator's timeout of %s s",
                  rank(), what.c_str(), secondsText(timeout_).c_str());
    if (r != ncclSuccess)
      return fail(HJ_ERR_BACKEND, "rank %d: %s failed in NCCL: %s", rank(), what.c_str(), ncclError(n, c_, r).c_str());
    if (kind < HJ_COLL_GROUP_BEGIN && groupDepth_ > 0 && groupFirst_.empty()) groupFirst_ = what;
    // What the watchdog watches: each collective outside a group, and each
    // outermost group, once NCCL has queued its work.
    bool queued = groupDepth_ == 0 && kind != HJ_COLL_GROUP_BEGIN;
    if (!dog_ || captured || !queued) return HJ_OK;
    if (kind != HJ_COLL_GROUP_END) return watch(stream, what);
    return watch(stream, groupFirst_.empty() ? what : groupFirst_ + " and the rest of its send/receive group");
  }

  int32_t watchLaunch(void *stream, const std::string &what) override {
    if (!dog_) return HJ_OK;
    std::lock_guard<std::mutex> l(m_);
    if (aborted_) return HJ_OK;  // the launch fails on its own: nothing of this communicator runs
    return watch(stream, what);
  }

  void closeGroups() override {
    std::lock_guard<std::mutex> l(m_);
    endGroups();
  }

  // A blocking communicator aborted inside an open group: NCCL runs the
  // abort when the group ends (closeGroups, which callers call next). A
  // non-blocking one would run it in a thread of NCCL's that nothing could
  // wait for: its groups end first (what they queued then runs until the
  // abort makes it return).
  void abort(const std::string &why) override {
    {
      std::lock_guard<std::mutex> l(m_);
      if (aborted_) return;
      if (dog_) endGroups();
      aborted_ = true;
      reason_ = why;
    }
    nccl().ncclCommAbort(c_);
  }

 private:
  static constexpr ncclResult_t kTimedOut = static_cast<ncclResult_t>(-1);

  // A non-blocking communicator's call returns before NCCL's threads have
  // queued its work: waits until they have (at most the timeout). With m_.
  // A blocking one's call has queued it: an asynchronous error NCCL saw
  // meanwhile fails it.
  ncclResult_t settle(ncclResult_t r) {
    const Nccl &n = nccl();
    if (!dog_) {
      ncclResult_t a = ncclSuccess;
      if (r == ncclSuccess && n.ncclCommGetAsyncError(c_, &a) == ncclSuccess && a != ncclInProgress) return a;
      return r;
    }
    auto deadline = deadlineAfter(timeout_);
    for (int round = 0;; ++round) {
      ncclResult_t a = ncclSuccess;
      if (ncclResult_t q = n.ncclCommGetAsyncError(c_, &a)) return q;
      if (a != ncclInProgress) return a;
      if (std::chrono::steady_clock::now() > deadline) return kTimedOut;
      pause(round);
    }
  }

  // With m_: ends the groups this rank opened (after a non-blocking abort
  // they have been ended already; a blocking abort's runs here).
  void endGroups() {
    for (; groupDepth_ > 0; --groupDepth_) {
      ncclResult_t r = nccl().ncclGroupEnd();
      if (!aborted_) settle(r);
    }
  }

  // With m_: records an event after the work just
  // queued on `stream` and has the watchdog watch it.
  int32_t watch(void *stream, const std::string &what) {
    void *e = dog_->reuse();
    if (!e)
      if (int32_t st = device_->makeEvent(&e)) return st;
    bool recorded = false;
    if (int32_t st = device_->record(e, stream, &recorded)) {
      device_->destroyEvent(e);
      return st;
    }
    if (!recorded) {
      dog_->recycle(e);
      return HJ_OK;
    }
    dog_->watch(e, what);
    return HJ_OK;
  }

  // The watchdog's poll: NCCL's own asynchronous error (a network peer that
  // went away), read when no call of this rank is using the communicator.
  std::string asyncError() {
    std::unique_lock<std::mutex> l(m_, std::try_to_lock);
    if (!l.owns_lock() || aborted_) return "";
    ncclResult_t a = ncclSuccess;
    if (nccl().ncclCommGetAsyncError(c_, &a) != ncclSuccess || a == ncclSuccess || a == ncclInProgress) return "";
    return std::string("NCCL reported ") + ncclError(nccl(), c_, a);
  }

  // On the watchdog's thread: the context faults with `message`, then the
  // communicator is aborted, which makes its kernels return (their work
  // undone) so every wait for them ends. Not inside an open group of the
  // rank's thread (its calls in between are short): NCCL's abort would
  // free what that group still holds.
  void expire(const std::string &message) {
    for (;;) {
      {
        std::lock_guard<std::mutex> l(m_);
        if (aborted_) return;
        if (groupDepth_ == 0) {
          aborted_ = true;
          reason_ = message;
          break;
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    device_->fault(message);
    nccl().ncclCommAbort(c_);  // waits until the context's graphs holding its work are gone
  }

  ncclComm_t c_;
  const double timeout_;
  std::unique_ptr<CommDevice> device_;
  std::mutex m_;
  bool aborted_ = false;
  std::string reason_;    // why it was aborted
  int groupDepth_ = 0;    // ncclGroupStart calls not yet ended
  std::string groupFirst_;  // the first call of the open group, for the watchdog
  std::unique_ptr<Watchdog> dog_;  // last: its thread goes first
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

int32_t makeNcclComm(const hj_comm_id &id, int32_t world, int32_t rank, double timeout,
                     std::unique_ptr<CommDevice> device, std::unique_ptr<Comm> &out) {
  const Nccl &n = nccl();
  if (!n.error.empty()) return fail(HJ_ERR_NOT_FOUND, "%s", n.error.c_str());
  ncclUniqueId nid;
  std::memcpy(nid.internal, id.bytes, sizeof nid.internal);
  ncclComm_t c = nullptr;
  // Bounded: non-blocking, so that no call of this rank waits in NCCL for a
  // peer and the watchdog may abort. NCCL_COMM_BLOCKING=1 in the
  // environment overrides it (NCCL's rule): then nothing is bounded.
  bool bounded = std::isfinite(timeout) && n.ncclCommInitRankConfig;
  if (const char *b = std::getenv("NCCL_COMM_BLOCKING"); b && std::atoi(b) == 1) bounded = false;
  if (!bounded) {
    if (ncclResult_t r = n.ncclCommInitRank(&c, world, nid, rank))
      return fail(HJ_ERR_BACKEND, "rank %d: ncclCommInitRank of %d ranks failed: %s", rank, world,
                  n.ncclGetErrorString(r));
    out = std::make_unique<NcclComm>(c, rank, world, HUGE_VAL, nullptr);
    return HJ_OK;
  }
  ncclConfig_t config;
  std::memset(&config, 0, sizeof config);
  config.size = sizeof config;
  config.magic = kNcclConfigMagic;
  config.version = kNcclConfigVersion;
  config.blocking = 0;
  config.cgaClusterSize = config.minCTAs = config.maxCTAs = config.splitShare = INT_MIN;  // NCCL's defaults
  ncclResult_t r = n.ncclCommInitRankConfig(&c, world, nid, rank, &config);
  auto deadline = deadlineAfter(timeout);
  for (int round = 0; r == ncclInProgress && c; ++round) {
    if (std::chrono::steady_clock::now() > deadline) {
      n.ncclCommAbort(c);
      return fail(HJ_ERR_BACKEND,
                  "rank %d: joining a communicator of %d ranks did not complete within its timeout of %s s: a rank "
                  "did not join (it died, hangs, or was given another id); the join was aborted",
                  rank, world, secondsText(timeout).c_str());
    }
    pause(round);
    if (ncclResult_t q = n.ncclCommGetAsyncError(c, &r)) r = q;
  }
  if (r != ncclSuccess) {
    std::string why = ncclError(n, c, r);
    if (c) n.ncclCommAbort(c);
    return fail(HJ_ERR_BACKEND, "rank %d: ncclCommInitRankConfig of %d ranks failed: %s", rank, world, why.c_str());
  }
  out = std::make_unique<NcclComm>(c, rank, world, timeout, std::move(device));
  return HJ_OK;
}

}  // namespace hj
