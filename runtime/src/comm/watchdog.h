// watchdog.h - a communicator's watchdog: a thread that waits for the work a
// rank queued to complete and, when the oldest piece has not completed within
// the timeout (or the communicator reports an error), says so once.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace hj {

class Watchdog {
 public:
  // What the watchdog asks of its owner. Every hook runs on the watchdog's
  // thread, never with the watchdog's lock held.
  struct Hooks {
    // 1: the work before `token` has completed; 0: not yet; -1: it cannot
    // tell (the device failed; that error reaches the owner's calls): the
    // token is no longer watched.
    std::function<int(void *token)> done;
    // Polled while something is watched: the communicator's own error, or "".
    std::function<std::string()> failed;
    // Called once, with the message naming the rank, the work, how long it
    // waited and why; the watchdog watches nothing after it.
    std::function<void(const std::string &message)> expire;
  };

  // `timeout` in seconds (finite, positive); `world` names the ranks a
  // collective waits for in the message.
  Watchdog(int32_t rank, int32_t world, double timeout, Hooks hooks);
  ~Watchdog();  // stop(), tokens left to their owner (see drain)
  Watchdog(const Watchdog &) = delete;
  Watchdog &operator=(const Watchdog &) = delete;

  // Watches the work queued before `token` (the owner's: an event recorded
  // after it), named `what`, from now. Starts the thread on first use.
  void watch(void *token, const std::string &what);
  // A token whose work has completed, for the owner to record again; nullptr
  // when there is none.
  void *reuse();
  // Gives back a token reuse() handed out and the owner did not use.
  void recycle(void *token);
  // Stops the thread and joins it (after `expire` returns, if it runs).
  void stop();
  // After stop(): hands every token it holds (watched or done) to `destroy`.
  void drain(const std::function<void(void *)> &destroy);
  // True once `expire` was called (or is being called).
  bool expired() const;
  // Pieces of work watched so far (each gets the next sequence number).
  uint64_t watched() const;
  // How often the thread looks (watch() does not wake it: a wake-up per
  // call would cost the caller a system call and the thread a switch).
  static constexpr std::chrono::milliseconds kPoll{20};

 private:
  struct Piece {
    void *token;
    std::string what;
    uint64_t seq;
    std::chrono::steady_clock::time_point queued;
  };
  void loop();
  std::string message(const Piece &p, double waited, const std::string &why) const;
  // The pieces watched, oldest first, in a ring whose strings keep their
  // storage: a watch allocates nothing once the ring has grown. Only the
  // thread pops; watch() may grow it (moving the pieces).
  Piece &front() { return ring_[head_]; }
  void push(void *token, const std::string &what);
  void pop();

  const int32_t rank_, world_;
  const double timeout_;
  Hooks hooks_;
  mutable std::mutex m_;
  std::condition_variable cv_;
  std::vector<Piece> ring_;
  size_t head_ = 0, count_ = 0;
  std::vector<void *> free_;
  uint64_t seq_ = 0;
  bool stop_ = false, expired_ = false;
  std::thread thread_;
};

}  // namespace hj
