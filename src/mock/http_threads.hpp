// Internal: the mock's connection threads — each connection on a thread of its own, up to a
// limit, in place of cpp-httplib's fixed pool of 64.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>

#include <httplib.h>

namespace clef::mock_detail {

/// Runs each connection on a thread of its own, up to `max_threads` at once (cpp-httplib's pool
/// has a fixed 64: 64 idle or slow connections and nobody else was answered). A thread idle for
/// a while exits, so a burst of connections does not leave its threads behind.
class ConnectionThreads final : public httplib::TaskQueue {
 public:
  explicit ConnectionThreads(const std::atomic<std::size_t>& max_threads)
      : m_state(std::make_shared<State>()), m_max_threads(max_threads) {}
  ~ConnectionThreads() override { shutdown(); }

  void enqueue(std::function<void()> job) override;
  /// Waits until every thread has left.
  void shutdown() override;

 private:
  struct State {
    std::mutex mutex;
    std::condition_variable ready;
    std::condition_variable gone;
    std::deque<std::function<void()>> jobs;
    std::size_t threads = 0;
    std::size_t idle = 0;
    bool stopping = false;
  };

  static void work(State& state);

  std::shared_ptr<State> m_state;
  const std::atomic<std::size_t>& m_max_threads;
};

}  // namespace clef::mock_detail
