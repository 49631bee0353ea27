// host_comm.cpp - collectives between ranks that are threads of one process
// (the host backend): each rank posts its buffers, a barrier, each computes
// its result from the others' buffers into its own scratch, a barrier, each
// writes its result. Sends are buffered; a receive waits for its message.
// Inside a group, receives wait until the group ends, after its sends (so a
// group that receives first proceeds, as NCCL's does).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <random>
#include <vector>

#include "comm/comm.h"
#include "base/error.h"

namespace hj {

double commTimeoutSeconds() {
  const char *v = std::getenv("HOSTJIT_COMM_TIMEOUT");
  if (!v || !*v) return 120.0;
  char *end = nullptr;
  double s = std::strtod(v, &end);
  if (end == v || s < 0 || std::isnan(s)) return 120.0;
  return s == 0 ? HUGE_VAL : s;
}

std::chrono::steady_clock::time_point deadlineAfter(double seconds) {
  auto now = std::chrono::steady_clock::now();
  if (!(seconds < 3.0e9)) return now + std::chrono::hours(24 * 365 * 100);  // no bound: a century
  return now + std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(seconds));
}

std::string secondsText(double seconds) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", seconds);
  return buf;
}

const char *collectiveName(uint32_t kind) {
  static const char *names[] = {"all_reduce", "all_gather", "reduce_scatter", "broadcast",
                                "send",       "recv",       "group begin",    "group end"};
  return kind < 8 ? names[kind] : "an unknown collective";
}

const char *reduceOpName(uint32_t op) {
  static const char *names[] = {"sum", "prod", "max", "min"};
  return op < 4 ? names[op] : "?";
}

namespace {

using Clock = std::chrono::steady_clock;

struct Post {
  uint32_t kind = 0, dtype = 0, op = 0;
  uint64_t count = 0;
  int32_t peer = 0;
  const void *src = nullptr;
  std::string what;
};

struct Message {
  std::vector<unsigned char> data;
  uint64_t count = 0;
  uint32_t dtype = 0;
};

struct HostGroup {
  explicit HostGroup(int32_t w) : world(w), joined(w, false), left(w, false), posts(w), mailbox(size_t(w) * w) {}
  const int32_t world;
  std::mutex m;
  std::condition_variable cv;
  std::vector<bool> joined, left;
  int32_t members = 0;
  uint64_t generation = 0;
  int32_t arrived = 0;
  int32_t receiving = 0;  // ranks waiting in a receive
  std::vector<Post> posts;
  std::vector<std::deque<Message>> mailbox;  // [from * world + to]
  std::string aborted;                       // why, once aborted
};

std::mutex gRegistryMutex;
std::map<std::string, std::weak_ptr<HostGroup>> gRegistry;

// The element-wise reduction of `n` elements of `src` into `acc`.
template <class T>
void reduceInto(T *acc, const T *src, uint64_t n, uint32_t op) {
  for (uint64_t i = 0; i < n; ++i) {
    switch (op) {
      case HJ_REDUCE_SUM: acc[i] = static_cast<T>(acc[i] + src[i]); break;
      case HJ_REDUCE_PROD: acc[i] = static_cast<T>(acc[i] * src[i]); break;
      case HJ_REDUCE_MAX: acc[i] = std::max(acc[i], src[i]); break;
      default: acc[i] = std::min(acc[i], src[i]); break;
    }
  }
}

// Reduces; false for a dtype the host does not reduce (f16, bf16, bool, i16).
bool reduce(void *acc, const void *src, uint64_t n, uint32_t dtype, uint32_t op) {
  switch (dtype) {
    case HJ_DTYPE_f32: reduceInto(static_cast<float *>(acc), static_cast<const float *>(src), n, op); return true;
    case HJ_DTYPE_f64: reduceInto(static_cast<double *>(acc), static_cast<const double *>(src), n, op); return true;
    case HJ_DTYPE_i8: reduceInto(static_cast<int8_t *>(acc), static_cast<const int8_t *>(src), n, op); return true;
    case HJ_DTYPE_u8: reduceInto(static_cast<uint8_t *>(acc), static_cast<const uint8_t *>(src), n, op); return true;
    case HJ_DTYPE_i32: reduceInto(static_cast<int32_t *>(acc), static_cast<const int32_t *>(src), n, op); return true;
    case HJ_DTYPE_u32: reduceInto(static_cast<uint32_t *>(acc), static_cast<const uint32_t *>(src), n, op); return true;
    case HJ_DTYPE_i64: reduceInto(static_cast<int64_t *>(acc), static_cast<const int64_t *>(src), n, op); return true;
    case HJ_DTYPE_u64: reduceInto(static_cast<uint64_t *>(acc), static_cast<const uint64_t *>(src), n, op); return true;
    default: return false;
  }
}

class HostComm final : public Comm {
 public:
  HostComm(std::shared_ptr<HostGroup> g, int32_t rank, double timeout)
      : Comm(rank, g->world), g_(std::move(g)), timeout_(timeout) {}
  // A rank that goes makes no more calls: a rank that waits for it (in a
  // collective, or for a message it has not sent) fails instead of waiting.
  // Calls the other ranks completed with it are not affected.
  ~HostComm() override {
    std::lock_guard<std::mutex> l(g_->m);
    --g_->members;
    g_->left[rank()] = true;
    g_->cv.notify_all();
  }

  int32_t run(uint32_t kind, const void *src, void *dst, uint64_t count, uint32_t dtype, uint32_t op, int32_t peer,
              void *, bool, const std::string &what) override {
    size_t esize = hj_dtype_size(dtype);
    switch (kind) {
      case HJ_COLL_GROUP_BEGIN:
        ++groupDepth_;
        return HJ_OK;
      case HJ_COLL_GROUP_END: {
        if (groupDepth_ == 0) return HJ_OK;
        if (--groupDepth_ > 0) return HJ_OK;
        std::vector<PendingRecv> pending = std::move(pending_);
        pending_.clear();
        for (const PendingRecv &r : pending)
          if (int32_t st = recv(r.dst, r.count, r.dtype, r.peer, esizeOf(r.dtype), r.what)) return st;
        return HJ_OK;
      }
      case HJ_COLL_SEND: return send(src, count, dtype, peer, esize);
      case HJ_COLL_RECV:
        if (groupDepth_ > 0) {  // after the group's sends
          pending_.push_back({dst, count, dtype, peer, what});
          return HJ_OK;
        }
        return recv(dst, count, dtype, peer, esize, what);
      default: break;
    }
    if ((kind == HJ_COLL_ALL_REDUCE || kind == HJ_COLL_REDUCE_SCATTER) && !reducible(dtype))
      return fail(HJ_ERR_INVALID_ARGUMENT, "rank %d: %s: the host backend does not reduce %s", rank(), what.c_str(),
                  dtypeText(dtype));
    {
      std::lock_guard<std::mutex> l(g_->m);
      if (!g_->aborted.empty())  // others may still read the posts of a failed call
        return fail(HJ_ERR_BACKEND, "rank %d: %s: the communicator was aborted (%s)", rank(), what.c_str(),
                    g_->aborted.c_str());
      Post &p = g_->posts[rank()];
      p.kind = kind, p.dtype = dtype, p.op = op, p.count = count, p.peer = peer, p.src = src, p.what = what;
    }
    if (int32_t st = barrier(what)) return st;
    // Every rank made the same call: else all see the mismatch and fail.
    for (int32_t r = 0; r < world(); ++r) {
      const Post &o = g_->posts[r];
      if (o.kind != kind || o.count != count || o.dtype != dtype || o.op != op || o.peer != peer) {
        std::string why = "rank " + std::to_string(r) + " called " + describe(o) + " where rank " +
                          std::to_string(rank()) + " called " + describe(g_->posts[rank()]);
        abortWith(why);
        return fail(HJ_ERR_INVALID_ARGUMENT, "rank %d: %s: %s", rank(), what.c_str(), why.c_str());
      }
    }
    size_t bytes = size_t(count) * esize;
    scratch_.resize(kind == HJ_COLL_ALL_GATHER ? bytes * world() : bytes);
    switch (kind) {
      case HJ_COLL_ALL_REDUCE:
        std::memcpy(scratch_.data(), g_->posts[0].src, bytes);
        for (int32_t r = 1; r < world(); ++r) reduce(scratch_.data(), g_->posts[r].src, count, dtype, op);
        break;
      case HJ_COLL_REDUCE_SCATTER:  // my block of each rank's world * count
        std::memcpy(scratch_.data(), static_cast<const char *>(g_->posts[0].src) + rank() * bytes, bytes);
        for (int32_t r = 1; r < world(); ++r)
          reduce(scratch_.data(), static_cast<const char *>(g_->posts[r].src) + rank() * bytes, count, dtype, op);
        break;
      case HJ_COLL_ALL_GATHER:
        for (int32_t r = 0; r < world(); ++r) std::memcpy(scratch_.data() + r * bytes, g_->posts[r].src, bytes);
        break;
      case HJ_COLL_BROADCAST:
        if (peer < 0 || peer >= world()) {
          barrier(what);
          return fail(HJ_ERR_INVALID_ARGUMENT, "rank %d: %s: root %d is not a rank (0 to %d)", rank(), what.c_str(),
                      peer, world() - 1);
        }
        std::memcpy(scratch_.data(), g_->posts[peer].src, bytes);
        break;
      default: return fail(HJ_ERR_INVALID_ARGUMENT, "rank %d: %s: unknown collective %u", rank(), what.c_str(), kind);
    }
    if (int32_t st = barrier(what)) return st;  // nobody reads the posts any more
    if (!scratch_.empty()) std::memcpy(dst, scratch_.data(), scratch_.size());
    return HJ_OK;
  }

  void abort(const std::string &why) override { abortWith("rank " + std::to_string(rank()) + " aborted: " + why); }

  void closeGroups() override {
    groupDepth_ = 0;
    pending_.clear();
  }

 private:
  static bool reducible(uint32_t dtype) {
    return dtype == HJ_DTYPE_f32 || dtype == HJ_DTYPE_f64 || dtype == HJ_DTYPE_i8 || dtype == HJ_DTYPE_u8 ||
           dtype == HJ_DTYPE_i32 || dtype == HJ_DTYPE_u32 || dtype == HJ_DTYPE_i64 || dtype == HJ_DTYPE_u64;
  }
  static const char *dtypeText(uint32_t dtype) {
    static const char *names[] = {
#define HJ_DTYPE(name, ident, code, bits, kind) #name,
#include "hostjit/dtypes.def"
#undef HJ_DTYPE
    };
    return dtype < HJ_DTYPE_COUNT ? names[dtype] : "?";
  }
  static std::string describe(const Post &p) {
    std::string s = collectiveName(p.kind);
    if (p.kind == HJ_COLL_ALL_REDUCE || p.kind == HJ_COLL_REDUCE_SCATTER) s += std::string(" ") + reduceOpName(p.op);
    s += " of " + std::to_string(p.count) + " " + dtypeText(p.dtype);
    if (p.kind == HJ_COLL_BROADCAST) s += " from root " + std::to_string(p.peer);
    return s + " (" + p.what + ")";
  }

  void abortWith(const std::string &why) {
    std::lock_guard<std::mutex> l(g_->m);
    if (g_->aborted.empty()) g_->aborted = why;
    g_->cv.notify_all();
  }

  // The first rank that left, or -1.
  int32_t leaver() const {
    for (int32_t r = 0; r < world(); ++r)
      if (g_->left[r]) return r;
    return -1;
  }

  // Waits until every rank arrives, the group aborts, a rank leaves or the
  // time runs out.
  int32_t barrier(const std::string &what) {
    std::unique_lock<std::mutex> l(g_->m);
    if (!g_->aborted.empty())
      return fail(HJ_ERR_BACKEND, "rank %d: %s: the communicator was aborted (%s)", rank(), what.c_str(),
                  g_->aborted.c_str());
    if (int32_t r = leaver(); r >= 0)
      return fail(HJ_ERR_BACKEND, "rank %d: %s: rank %d left the communicator and will not take part", rank(),
                  what.c_str(), r);
    uint64_t gen = g_->generation;
    if (++g_->arrived == world()) {
      g_->arrived = 0;
      ++g_->generation;
      g_->cv.notify_all();
      return HJ_OK;
    }
    auto deadline = deadlineAfter(timeout_);
    while (g_->generation == gen && g_->aborted.empty() && leaver() < 0) {
      if (g_->cv.wait_until(l, deadline) == std::cv_status::timeout && g_->generation == gen) {
        g_->aborted = "rank " + std::to_string(rank()) + " waited " + secondsText(timeout_) +
                      " s in " + what + " for the other ranks";
        g_->cv.notify_all();
      }
    }
    if (g_->generation != gen) return HJ_OK;
    --g_->arrived;  // this rank no longer waits
    if (g_->aborted.empty())
      return fail(HJ_ERR_BACKEND, "rank %d: %s: rank %d left the communicator and will not take part", rank(),
                  what.c_str(), leaver());
    return fail(HJ_ERR_BACKEND, "rank %d: %s: the communicator was aborted (%s)", rank(), what.c_str(),
                g_->aborted.c_str());
  }

  int32_t send(const void *src, uint64_t count, uint32_t dtype, int32_t peer, size_t esize) {
    if (peer < 0 || peer >= world() || peer == rank())
      return fail(HJ_ERR_INVALID_ARGUMENT, "rank %d: send: peer %d is not another rank (0 to %d)", rank(), peer,
                  world() - 1);
    Message msg;
    msg.data.assign(static_cast<const unsigned char *>(src), static_cast<const unsigned char *>(src) + count * esize);
    msg.count = count;
    msg.dtype = dtype;
    std::lock_guard<std::mutex> l(g_->m);
    if (!g_->aborted.empty())
      return fail(HJ_ERR_BACKEND, "rank %d: send: the communicator was aborted (%s)", rank(), g_->aborted.c_str());
    if (g_->left[peer])
      return fail(HJ_ERR_BACKEND, "rank %d: send: rank %d left the communicator and will not receive", rank(), peer);
    g_->mailbox[size_t(rank()) * world() + peer].push_back(std::move(msg));
    g_->cv.notify_all();
    return HJ_OK;
  }

  int32_t recv(void *dst, uint64_t count, uint32_t dtype, int32_t peer, size_t esize, const std::string &what) {
    if (peer < 0 || peer >= world() || peer == rank())
      return fail(HJ_ERR_INVALID_ARGUMENT, "rank %d: %s: peer %d is not another rank (0 to %d)", rank(), what.c_str(),
                  peer, world() - 1);
    std::unique_lock<std::mutex> l(g_->m);
    auto &box = g_->mailbox[size_t(peer) * world() + rank()];
    auto deadline = deadlineAfter(timeout_);
    struct Waiting {
      int32_t &n;
      explicit Waiting(int32_t &c) : n(++c) {}
      ~Waiting() { --n; }
    } waiting(g_->receiving);
    while (box.empty() && g_->aborted.empty() && !g_->left[peer]) {
      if (g_->cv.wait_until(l, deadline) == std::cv_status::timeout && box.empty()) {
        g_->aborted = "rank " + std::to_string(rank()) + " waited " + secondsText(timeout_) +
                      " s in " + what + " for rank " + std::to_string(peer);
        g_->cv.notify_all();
      }
    }
    if (box.empty() && g_->aborted.empty())
      return fail(HJ_ERR_BACKEND, "rank %d: %s: rank %d left the communicator without sending", rank(), what.c_str(),
                  peer);
    if (box.empty())
      return fail(HJ_ERR_BACKEND, "rank %d: %s: the communicator was aborted (%s)", rank(), what.c_str(),
                  g_->aborted.c_str());
    Message msg = std::move(box.front());
    box.pop_front();
    if (msg.count != count || msg.dtype != dtype)
      return fail(HJ_ERR_INVALID_ARGUMENT, "rank %d: %s: rank %d sent %llu %s, expected %llu %s", rank(), what.c_str(),
                  peer, (unsigned long long)msg.count, dtypeText(msg.dtype), (unsigned long long)count,
                  dtypeText(dtype));
    if (count) std::memcpy(dst, msg.data.data(), count * esize);
    return HJ_OK;
  }

  static size_t esizeOf(uint32_t dtype) { return hj_dtype_size(dtype); }

  struct PendingRecv {
    void *dst;
    uint64_t count;
    uint32_t dtype;
    int32_t peer;
    std::string what;
  };
  std::shared_ptr<HostGroup> g_;
  double timeout_;  // seconds a wait lasts at most (infinity: no bound)
  std::vector<unsigned char> scratch_;
  int groupDepth_ = 0;
  std::vector<PendingRecv> pending_;  // receives of the open group
};

}  // namespace

int32_t hostCommUniqueId(hj_comm_id *out) {
  std::random_device rd;
  for (size_t i = 0; i < sizeof out->bytes; i += 4) {
    uint32_t v = rd();
    std::memcpy(out->bytes + i, &v, std::min<size_t>(4, sizeof out->bytes - i));
  }
  return HJ_OK;
}

int32_t makeHostComm(const hj_comm_id &id, int32_t world, int32_t rank, double timeout, std::unique_ptr<Comm> &out) {
  std::string key(reinterpret_cast<const char *>(id.bytes), sizeof id.bytes);
  std::shared_ptr<HostGroup> g;
  {
    std::lock_guard<std::mutex> l(gRegistryMutex);
    for (auto it = gRegistry.begin(); it != gRegistry.end();)  // forget groups whose ranks are all gone
      it = it->second.expired() ? gRegistry.erase(it) : std::next(it);
    auto &slot = gRegistry[key];
    g = slot.lock();
    if (!g) slot = g = std::make_shared<HostGroup>(world);
  }
  std::unique_lock<std::mutex> l(g->m);
  if (g->world != world)
    return fail(HJ_ERR_INVALID_ARGUMENT, "hj_comm_init: rank %d says %d ranks, but a rank before it said %d", rank,
                world, g->world);
  if (g->joined[rank]) return fail(HJ_ERR_INVALID_ARGUMENT, "hj_comm_init: rank %d joined twice", rank);
  g->joined[rank] = true;
  ++g->members;
  g->cv.notify_all();
  auto deadline = deadlineAfter(timeout);
  while (std::count(g->joined.begin(), g->joined.end(), true) < world && g->aborted.empty()) {
    if (g->cv.wait_until(l, deadline) == std::cv_status::timeout &&
        std::count(g->joined.begin(), g->joined.end(), true) < world) {
      g->joined[rank] = false;
      --g->members;
      return fail(HJ_ERR_BACKEND, "hj_comm_init: rank %d waited %s s for the other ranks of %d to join", rank,
                  secondsText(timeout).c_str(), world);
    }
  }
  // Every rank joined: the communicator exists (a rank that failed since then
  // shows in the first collective, not here).
  if (std::count(g->joined.begin(), g->joined.end(), true) < world)
    return fail(HJ_ERR_BACKEND, "hj_comm_init: aborted (%s)", g->aborted.c_str());
  l.unlock();
  out = std::make_unique<HostComm>(std::move(g), rank, timeout);
  return HJ_OK;
}

}  // namespace hj
