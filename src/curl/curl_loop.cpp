// The asynchronous libcurl transport: loop threads, each owning one multi handle driven by
// curl_multi_poll and woken by curl_multi_wakeup when work is queued from another thread.
//
// Why curl_multi_poll and not curl_multi_socket_action on epoll: with a handful of loop threads
// and at most a few thousand transfers, curl's own poll set costs less than keeping an epoll
// set in step with curl's socket callbacks, and it needs no event library; curl_multi_wakeup
// (7.68+) gives the cross-thread wake-up that socket_action would need an eventfd for.
#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#include "clef/async_transport.hpp"
#include "curl_transfer.hpp"
#include "timer_queue.hpp"

namespace clef {
namespace {

using Clock = std::chrono::steady_clock;

/// How often transfers that can be cancelled are looked at while curl has nothing to say.
constexpr std::chrono::milliseconds cancel_check_interval{50};

/// One loop thread's state. The thread holds a reference of its own, so a loop whose last
/// outside owner goes away inside one of its handlers finishes its turn safely.
class Loop {
 public:
  using TimerTask = detail::TimerQueue::Task;

  Loop() : m_multi(curl_multi_init()) {}
  ~Loop() {
    for (CURL* handle : m_idle) curl_easy_cleanup(handle);
    curl_multi_cleanup(m_multi);
  }
  Loop(const Loop&) = delete;
  Loop& operator=(const Loop&) = delete;

  void start(HttpRequest request, ResponseHandler done) {
    {
      std::lock_guard<std::mutex> lock(m_mutex);
      if (!m_stopping) {
        m_incoming.push_back(Incoming{std::move(request), std::move(done)});
        ++m_queued;
      } else {
        m_refused.push_back(std::move(done));
      }
      if (!take_sleeping()) return;
    }
    curl_multi_wakeup(m_multi);
  }

  void after(std::chrono::milliseconds delay, TimerTask task) {
    {
      std::lock_guard<std::mutex> lock(m_mutex);
      m_new_timers.emplace_back(Clock::now() + delay, std::move(task));
      if (!take_sleeping()) return;
    }
    curl_multi_wakeup(m_multi);
  }

  void stop() {
    {
      std::lock_guard<std::mutex> lock(m_mutex);
      m_stopping = true;
    }
    curl_multi_wakeup(m_multi);
  }

  void run() {
    for (;;) {
      if (!turn()) break;
    }
    shut_down();
  }

 private:
  /// Whether the loop is in (or about to enter) curl_multi_poll, cleared so that one wakeup
  /// serves every submission until it polls again: a busy loop takes new work at its next
  /// turn without a wakeup's write and read per request. Called with m_mutex held.
  bool take_sleeping() {
    const bool sleeping = m_sleeping;
    m_sleeping = false;
    return sleeping;
  }

  struct Incoming {
    HttpRequest request;
    ResponseHandler done;
  };
  /// A transfer in flight. Held by pointer: curl's callbacks write into `transfer`.
  struct Active {
    HttpRequest request;
    ResponseHandler done;
    detail::CurlTransfer transfer;
  };

  /// One turn of the loop; false once it is stopping and has taken what was queued.
  bool turn() {
    std::vector<Incoming> incoming;
    std::vector<std::pair<Clock::time_point, TimerTask>> timers;
    std::vector<ResponseHandler> refused;
    bool stopping = false;
    {
      std::lock_guard<std::mutex> lock(m_mutex);
      incoming.swap(m_incoming);
      timers.swap(m_new_timers);
      refused.swap(m_refused);
      stopping = m_stopping;
      m_queued = 0;
    }
    for (auto& [when, task] : timers) m_timers.add(when, std::move(task));
    for (auto& done : refused) complete(done, shut_down_error());
    for (auto& item : incoming) {
      if (stopping) {
        complete(item.done, shut_down_error());
        continue;
      }
      begin(std::move(item));
    }
    if (stopping) return false;

    for (auto& task : m_timers.take_due(Clock::now())) detail::call_handler(task, false);
    int running = 0;
    curl_multi_perform(m_multi, &running);
    collect_finished();
    check_cancelled();

    long curl_wait = -1;
    curl_multi_timeout(m_multi, &curl_wait);
    auto wait = std::chrono::milliseconds(curl_wait < 0 ? 1000 : curl_wait);
    if (auto next = m_timers.next()) {
      wait = std::min(wait, std::chrono::duration_cast<std::chrono::milliseconds>(
                                std::max(*next - Clock::now(), Clock::duration::zero())));
    }
    if (m_cancellable > 0) wait = std::min(wait, cancel_check_interval);
    {
      std::lock_guard<std::mutex> lock(m_mutex);
      if (m_queued > 0 || !m_new_timers.empty() || !m_refused.empty() || m_stopping) {
        wait = std::chrono::milliseconds(0);
      }
      m_sleeping = wait.count() > 0;
    }
    curl_multi_poll(m_multi, nullptr, 0, static_cast<int>(wait.count()), nullptr);
    {
      std::lock_guard<std::mutex> lock(m_mutex);
      m_sleeping = false;
    }
    return true;
  }

  void begin(Incoming item) {
    CURL* handle = acquire();
    if (!handle) {
      complete(item.done, make_error(ErrorKind::connection_failed, "cannot create a curl handle"));
      return;
    }
    auto active = std::make_unique<Active>();
    active->request = std::move(item.request);
    active->done = std::move(item.done);
    active->transfer.prepare(handle, active->request);
    if (curl_multi_add_handle(m_multi, handle) != CURLM_OK) {
      auto result = make_error(ErrorKind::connection_failed, "cannot start the transfer");
      release(handle);
      complete(active->done, std::move(result));
      return;
    }
    if (active->request.cancel) ++m_cancellable;
    m_active.emplace(handle, std::move(active));
  }

  void collect_finished() {
    int left = 0;
    while (CURLMsg* message = curl_multi_info_read(m_multi, &left)) {
      if (message->msg != CURLMSG_DONE) continue;
      CURL* handle = message->easy_handle;
      const CURLcode code = message->data.result;
      finish(handle, [&](Active& active) { return active.transfer.finish(handle, code); });
    }
  }

  /// Transfers whose cancel flag turned true end now, whatever curl is waiting for.
  void check_cancelled() {
    if (m_cancellable == 0 || Clock::now() < m_next_cancel_check) return;
    m_next_cancel_check = Clock::now() + cancel_check_interval;
    std::vector<CURL*> cancelled;
    for (const auto& [handle, active] : m_active) {
      if (active->request.cancel && active->request.cancel->load()) cancelled.push_back(handle);
    }
    for (CURL* handle : cancelled) {
      finish(handle, [&](Active& active) -> Result<HttpResponse> {
        return make_error(ErrorKind::cancelled, "cancelled during the transfer",
                          active.request.url);
      });
    }
  }

  template <typename Outcome>
  void finish(CURL* handle, Outcome outcome) {
    const auto found = m_active.find(handle);
    if (found == m_active.end()) return;
    std::unique_ptr<Active> active = std::move(found->second);
    m_active.erase(found);
    curl_multi_remove_handle(m_multi, handle);
    if (active->request.cancel) --m_cancellable;
    Result<HttpResponse> result = outcome(*active);
    release(handle);
    complete(active->done, std::move(result));
  }

  void shut_down() {
    std::vector<CURL*> handles;
    for (const auto& [handle, active] : m_active) handles.push_back(handle);
    for (CURL* handle : handles) {
      finish(handle, [](Active&) -> Result<HttpResponse> { return shut_down_error(); });
    }
    for (auto& task : m_timers.take_all()) detail::call_handler(task, true);
    // Work queued by those last handlers, or by other threads meanwhile, is refused too.
    for (;;) {
      std::vector<Incoming> incoming;
      std::vector<std::pair<Clock::time_point, TimerTask>> timers;
      std::vector<ResponseHandler> refused;
      {
        std::lock_guard<std::mutex> lock(m_mutex);
        incoming.swap(m_incoming);
        timers.swap(m_new_timers);
        refused.swap(m_refused);
      }
      if (incoming.empty() && timers.empty() && refused.empty()) break;
      for (auto& item : incoming) complete(item.done, shut_down_error());
      for (auto& done : refused) complete(done, shut_down_error());
      for (auto& [when, task] : timers) detail::call_handler(task, true);
    }
  }

  static Error shut_down_error() {
    return make_error(ErrorKind::cancelled, "the transport shut down before the request ended");
  }

  static void complete(ResponseHandler& done, Result<HttpResponse> result) {
    detail::call_handler(done, std::move(result));
  }

  // Easy handles are reused: the connections belong to the multi handle's pool.
  CURL* acquire() {
    if (m_idle.empty()) return curl_easy_init();
    CURL* handle = m_idle.back();
    m_idle.pop_back();
    return handle;
  }
  void release(CURL* handle) { m_idle.push_back(handle); }

  CURLM* m_multi;
  std::mutex m_mutex;
  std::vector<Incoming> m_incoming;                                   // guarded by m_mutex
  std::vector<std::pair<Clock::time_point, TimerTask>> m_new_timers;  // guarded by m_mutex
  std::vector<ResponseHandler> m_refused;                             // guarded by m_mutex
  std::size_t m_queued = 0;                                           // guarded by m_mutex
  bool m_stopping = false;                                            // guarded by m_mutex
  bool m_sleeping = false;                                            // guarded by m_mutex
  // The loop thread's own:
  std::unordered_map<CURL*, std::unique_ptr<Active>> m_active;
  std::vector<CURL*> m_idle;
  detail::TimerQueue m_timers;
  std::size_t m_cancellable = 0;
  Clock::time_point m_next_cancel_check{};
};

class CurlLoopTransport final : public AsyncTransport {
 public:
  explicit CurlLoopTransport(std::size_t threads) {
    detail::curl_global_once();
    const std::size_t cores = std::max(1u, std::thread::hardware_concurrency());
    threads = std::clamp<std::size_t>(threads, 1, cores);
    for (std::size_t i = 0; i < threads; ++i) {
      auto loop = std::make_shared<Loop>();
      m_loops.push_back(loop);
      m_threads.emplace_back([loop] {
        pthread_setname_np(pthread_self(), "clef-loop");  // so top -H and gdb tell it apart
        loop->run();
      });
    }
  }

  ~CurlLoopTransport() override {
    for (auto& loop : m_loops) loop->stop();
    for (auto& thread : m_threads) {
      // The last reference may go inside a handler on a loop thread: that thread cannot join
      // itself; it holds its loop and ends on its own once the stop is seen.
      if (thread.get_id() == std::this_thread::get_id())
        thread.detach();
      else
        thread.join();
    }
  }

  void start(HttpRequest request, ResponseHandler done) override {
    next_loop().start(std::move(request), std::move(done));
  }

  void after(std::chrono::milliseconds delay,
             std::function<void(bool shutting_down)> task) override {
    next_loop().after(delay, std::move(task));
  }

 private:
  Loop& next_loop() {
    return *m_loops[m_next.fetch_add(1, std::memory_order_relaxed) % m_loops.size()];
  }

  std::vector<std::shared_ptr<Loop>> m_loops;
  std::vector<std::thread> m_threads;
  std::atomic<std::size_t> m_next{0};
};

}  // namespace

std::shared_ptr<AsyncTransport> make_curl_loop(std::size_t threads) {
  return std::make_shared<CurlLoopTransport>(threads);
}

}  // namespace clef
