// watchdog.cpp - a communicator's watchdog thread (watchdog.h).
#include "comm/watchdog.h"

#include <algorithm>
#include <cstdio>

#include "comm/comm.h"

namespace hj {

Watchdog::Watchdog(int32_t rank, int32_t world, double timeout, Hooks hooks)
    : rank_(rank), world_(world), timeout_(timeout), hooks_(std::move(hooks)) {}

Watchdog::~Watchdog() { stop(); }

void Watchdog::watch(void *token, const std::string &what) {
  std::lock_guard<std::mutex> l(m_);
  push(token, what);
  if (!thread_.joinable() && !stop_) thread_ = std::thread([this] { loop(); });
}

void Watchdog::push(void *token, const std::string &what) {
  if (count_ == ring_.size()) {  // full: unroll it, oldest first, and double it
    std::rotate(ring_.begin(), ring_.begin() + static_cast<std::ptrdiff_t>(head_), ring_.end());
    head_ = 0;
    ring_.resize(std::max<size_t>(16, 2 * ring_.size()));
  }
  Piece &p = ring_[(head_ + count_) % ring_.size()];
  p.token = token;
  p.what.assign(what);
  p.seq = ++seq_;
  p.queued = std::chrono::steady_clock::now();
  ++count_;
}

void Watchdog::pop() {
  head_ = (head_ + 1) % ring_.size();
  --count_;
}

void *Watchdog::reuse() {
  std::lock_guard<std::mutex> l(m_);
  if (free_.empty()) return nullptr;
  void *t = free_.back();
  free_.pop_back();
  return t;
}

void Watchdog::recycle(void *token) {
  std::lock_guard<std::mutex> l(m_);
  free_.push_back(token);
}

void Watchdog::stop() {
  {
    std::lock_guard<std::mutex> l(m_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id()) thread_.join();
}

void Watchdog::drain(const std::function<void(void *)> &destroy) {
  std::lock_guard<std::mutex> l(m_);
  for (; count_ > 0; pop()) destroy(front().token);
  for (void *t : free_) destroy(t);
  free_.clear();
}

bool Watchdog::expired() const {
  std::lock_guard<std::mutex> l(m_);
  return expired_;
}

uint64_t Watchdog::watched() const {
  std::lock_guard<std::mutex> l(m_);
  return seq_;
}

std::string Watchdog::message(const Piece &p, double waited, const std::string &why) const {
  std::string others;
  for (int32_t r = 0; r < world_ && r < 9; ++r)
    if (r != rank_) others += (others.empty() ? "" : ", ") + std::to_string(r);
  if (world_ > 9) others += ", ...";
  if (others.empty()) others = "none";
  char buf[160];
  std::snprintf(buf, sizeof buf, " (work %llu of the communicator, queued %.1f s ago; the ranks it waits for: %s)",
                static_cast<unsigned long long>(p.seq), waited, others.c_str());
  std::string m = "rank " + std::to_string(rank_) + ": " + p.what;
  if (why.empty())
    m += " did not complete within the communicator's timeout of " + secondsText(timeout_) + " s" + buf +
         ": a rank died, hangs or did not reach it, or work queued before it is still running";
  else
    m += " failed" + std::string(buf) + ": " + why;
  return m + "; the communicator was aborted";
}

void Watchdog::loop() {
  std::unique_lock<std::mutex> l(m_);
  while (!stop_) {
    if (count_ == 0) {
      cv_.wait_for(l, kPoll, [&] { return stop_; });
      continue;
    }
    // The oldest piece first: while it runs, later ones (on its stream) do too.
    void *token = front().token;
    auto queued = front().queued;
    l.unlock();
    int done = hooks_.done(token);
    std::string why = done == 0 && hooks_.failed ? hooks_.failed() : std::string();
    auto now = std::chrono::steady_clock::now();
    double waited = std::chrono::duration<double>(now - queued).count();
    l.lock();
    if (stop_) break;
    if (done != 0) {
      pop();
      free_.push_back(token);
      continue;
    }
    if (why.empty() && waited < timeout_) {
      auto left = std::chrono::duration<double>(timeout_ - waited);
      auto wait = std::min<std::chrono::steady_clock::duration>(
          kPoll, std::chrono::duration_cast<std::chrono::steady_clock::duration>(left) + std::chrono::milliseconds(1));
      cv_.wait_for(l, wait, [&] { return stop_; });
      continue;
    }
    expired_ = true;
    std::string msg = message(front(), waited, why);
    l.unlock();
    hooks_.expire(msg);
    l.lock();
    break;
  }
}

}  // namespace hj
