// A blocking Transport behind the asynchronous interface: a few pool threads send, one more
// runs the timers. For a user's own Transport and for the decorators (cache, cassette, -v)
// around a blocking one; the curl loop is the path that needs no thread per request.
#include <pthread.h>

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include "clef/async_transport.hpp"
#include "transport/timer_queue.hpp"

namespace clef {
namespace {

using Clock = std::chrono::steady_clock;

/// The pool's state: shared with its threads, which are detached and own it too, so a pool
/// whose last outside owner goes away on a pool thread (inside a handler) ends safely.
///
/// Threads are started when a request finds none idle, up to the cap, and leave after a few
/// idle seconds: a client made for decide() alone starts none, and a burst leaves none behind.
class Pool : public std::enable_shared_from_this<Pool> {
 public:
  Pool(std::shared_ptr<Transport> blocking, std::size_t max_threads)
      : m_blocking(std::move(blocking)), m_max_threads(std::max<std::size_t>(max_threads, 1)) {}

  void start(HttpRequest request, ResponseHandler done) {
    {
      std::lock_guard<std::mutex> lock(m_mutex);
      if (!m_stopping) {
        m_jobs.push_back(Job{std::move(request), std::move(done)});
        if (m_jobs.size() > m_idle && m_senders < m_max_threads) {
          ++m_senders;
          std::thread([pool = shared_from_this()] { pool->send_jobs(); }).detach();
        }
        m_changed.notify_one();
        return;
      }
    }
    detail::call_handler(done, shut_down_error());
  }

  void after(std::chrono::milliseconds delay, detail::TimerQueue::Task task) {
    {
      std::lock_guard<std::mutex> lock(m_mutex);
      if (!m_stopping) {
        m_timers.add(Clock::now() + delay, std::move(task));
        if (!m_timer_thread) {
          m_timer_thread = true;
          std::thread([pool = shared_from_this()] { pool->run_timers(); }).detach();
        }
        m_timers_changed.notify_one();
        return;
      }
    }
    detail::call_handler(task, true);
  }

  /// Completes what is queued as cancelled and waits for the threads to go, so the blocking
  /// transport (a cassette being written) is released before this returns; a request being
  /// sent ends on its own (the blocking transport honours request.cancel and its timeouts).
  /// On a pool thread (the last owner let go inside a handler) it cannot wait for itself.
  void stop() {
    std::unique_lock<std::mutex> lock(m_mutex);
    m_stopping = true;
    m_changed.notify_all();
    m_timers_changed.notify_all();
    if (t_pool == this) return;
    m_gone.wait(lock, [&] { return m_senders == 0 && !m_timer_thread; });
  }

 private:
  struct Job {
    HttpRequest request;
    ResponseHandler done;
  };

  void send_jobs() {
    pthread_setname_np(pthread_self(), "clef-pool");
    t_pool = this;
    std::unique_lock<std::mutex> lock(m_mutex);
    for (;;) {
      ++m_idle;
      const bool woken = m_changed.wait_for(lock, std::chrono::seconds(5),
                                            [&] { return m_stopping || !m_jobs.empty(); });
      --m_idle;
      if (m_jobs.empty()) {
        if (m_stopping || !woken) break;
        continue;
      }
      const bool stopping = m_stopping;
      {
        // Released before the lock is taken again: the job may hold the last owner of this
        // pool's transport, whose stop() takes the lock.
        Job job = std::move(m_jobs.front());
        m_jobs.pop_front();
        lock.unlock();
        detail::call_handler(
            job.done, stopping ? Result<HttpResponse>(shut_down_error()) : send(job.request));
      }
      lock.lock();
    }
    --m_senders;
    m_gone.notify_all();
  }

  void run_timers() {
    pthread_setname_np(pthread_self(), "clef-timers");
    t_pool = this;
    std::unique_lock<std::mutex> lock(m_mutex);
    for (;;) {
      if (m_stopping) {
        auto left = m_timers.take_all();
        lock.unlock();
        for (auto& task : left) detail::call_handler(task, true);
        left.clear();  // before the lock, as in send_jobs()
        lock.lock();
        m_timer_thread = false;
        m_gone.notify_all();
        return;
      }
      auto due = m_timers.take_due(Clock::now());
      if (!due.empty()) {
        lock.unlock();
        for (auto& task : due) detail::call_handler(task, false);
        due.clear();  // before the lock, as in send_jobs()
        lock.lock();
        continue;
      }
      if (auto next = m_timers.next())
        m_timers_changed.wait_until(lock, *next);
      else
        m_timers_changed.wait(lock);
    }
  }

  /// A request cancelled while it was queued is not sent; one being sent ends as the blocking
  /// transport notices its token or flag.
  Result<HttpResponse> send(const HttpRequest& request) {
    if (request.cancelled()) {
      return make_error(ErrorKind::cancelled, "cancelled before sending", request.url);
    }
    return m_blocking->send(request);
  }

  static Error shut_down_error() {
    return make_error(ErrorKind::cancelled, "the transport shut down before the request ended");
  }

  const std::shared_ptr<Transport> m_blocking;
  const std::size_t m_max_threads;
  std::mutex m_mutex;
  std::condition_variable m_changed;
  std::condition_variable m_timers_changed;
  std::condition_variable m_gone;
  std::deque<Job> m_jobs;
  detail::TimerQueue m_timers;
  std::size_t m_senders = 0;
  std::size_t m_idle = 0;
  bool m_timer_thread = false;
  bool m_stopping = false;
  /// The pool whose thread this is, if any.
  static thread_local const Pool* t_pool;
};

thread_local const Pool* Pool::t_pool = nullptr;

class PoolTransport final : public AsyncTransport {
 public:
  PoolTransport(std::shared_ptr<Transport> blocking, std::size_t max_threads)
      : m_pool(std::make_shared<Pool>(std::move(blocking), max_threads)) {}
  ~PoolTransport() override { m_pool->stop(); }

  void start(HttpRequest request, ResponseHandler done) override {
    m_pool->start(std::move(request), std::move(done));
  }
  void after(std::chrono::milliseconds delay,
             std::function<void(bool shutting_down)> task) override {
    m_pool->after(delay, std::move(task));
  }

 private:
  std::shared_ptr<Pool> m_pool;
};

}  // namespace

std::shared_ptr<AsyncTransport> make_async_transport(std::shared_ptr<Transport> blocking,
                                                     std::size_t threads) {
  return std::make_shared<PoolTransport>(std::move(blocking), threads);
}

}  // namespace clef
