// Internal: one libcurl event loop (curl_loop.cpp) — a multi handle on an epoll set, its timers
// and its queue — as the two asynchronous transports use it (curl_loop_transports.cpp): on
// threads of clef's own (run()), or driven by an application's loop (run_once()).
//
// Why socket_action on epoll and not curl_multi_poll: measured with bench/decide_all_bench,
// curl_multi_poll costs grow with the transfers in flight — every turn polls every socket and
// curl_multi_perform walks every transfer — so 2,000 in flight against a 1 s server took 340 µs
// of CPU per decision against 75 µs at 16. With epoll each turn touches only the sockets that
// are ready, and curl is told of its own timeouts through its timer callback.
#pragma once

#include <chrono>
#include <memory>

#include "clef/async_transport.hpp"
#include "transport/timer_queue.hpp"

namespace clef::detail {

class LoopCore {
 public:
  using TimerTask = TimerQueue::Task;
  virtual ~LoopCore() = default;

  /// From any thread: queued for the next turn, which this wakes. The request is shared with
  /// the caller (shared_request.hpp), who does not change it until `done` has run.
  virtual void start(std::shared_ptr<const HttpRequest> request, ResponseHandler done) = 0;
  virtual void after(std::chrono::milliseconds delay, TimerTask task) = 0;
  /// From any thread: run() ends after its turn, completing what is left as cancelled.
  virtual void stop() = 0;
  /// Turns until stop(), on the calling thread.
  virtual void run() = 0;

  /// Driven by an application's own loop: one turn that waits for nothing, then the owner waits
  /// on descriptor() (readable when there is work) at most timeout().
  virtual void run_once() = 0;
  virtual int descriptor() const = 0;
  virtual std::chrono::milliseconds timeout() const = 0;
  /// Ends a driven loop on its owner's thread: everything in flight or queued is completed as
  /// cancelled, and pending timers run with shutting_down.
  virtual void stop_here() = 0;
  /// True on the thread inside run(), run_once() or stop_here() of this loop.
  bool running_here() const;
};

/// Marks this thread as running `loop`'s handlers while it lives (a loop's run(), run_once(),
/// stop_here()), so that Client::decide() called from one of them can refuse to wait for itself.
class RunningLoop {
 public:
  explicit RunningLoop(const LoopCore* loop) : m_previous(current()) { current() = loop; }
  ~RunningLoop() { current() = m_previous; }
  RunningLoop(const RunningLoop&) = delete;
  RunningLoop& operator=(const RunningLoop&) = delete;
  static const LoopCore*& current() {
    static thread_local const LoopCore* loop = nullptr;
    return loop;
  }

 private:
  const LoopCore* m_previous;
};

inline bool LoopCore::running_here() const {
  return RunningLoop::current() == this;
}

std::shared_ptr<LoopCore> make_loop_core();

}  // namespace clef::detail
