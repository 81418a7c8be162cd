// The implementation of curl_loop.hpp: one event loop, a multi handle driven by
// curl_multi_socket_action on its own epoll set, woken through an eventfd when work is queued
// from another thread (curl_loop_transports.cpp runs it on threads or on an owner's loop).
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>
#include <vector>

#include "clef/async_transport.hpp"
#include "curl/curl_loop.hpp"
#include "curl/curl_transfer.hpp"
#include "curl/socket_set.hpp"
#include "transport/timer_queue.hpp"

namespace clef {
namespace {

using Clock = std::chrono::steady_clock;

/// How often transfers that can be cancelled are looked at while curl has nothing to say.
constexpr std::chrono::milliseconds cancel_check_interval{50};

/// One loop (curl_loop.hpp); its thread holds it too, so it outlives a handler that drops it.
class Loop final : public detail::LoopCore, public std::enable_shared_from_this<Loop> {
 public:
  Loop() : m_multi(curl_multi_init()), m_wake(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {
    curl_multi_setopt(m_multi, CURLMOPT_SOCKETFUNCTION, on_socket);
    curl_multi_setopt(m_multi, CURLMOPT_SOCKETDATA, this);
    curl_multi_setopt(m_multi, CURLMOPT_TIMERFUNCTION, on_timer);
    curl_multi_setopt(m_multi, CURLMOPT_TIMERDATA, this);
    m_sockets.watch_always(m_wake);
  }
  ~Loop() override {
    m_idle.clear();               // the easy handles go before their multi handle
    curl_multi_cleanup(m_multi);  // may still tell on_socket of sockets it closes
    ::close(m_wake);
  }
  Loop(const Loop&) = delete;
  Loop& operator=(const Loop&) = delete;

  void start(std::shared_ptr<const HttpRequest> request, ResponseHandler done) override {
    {
      std::lock_guard<std::mutex> lock(m_mutex);
      if (!m_stopping) {
        m_incoming.push_back(Incoming{std::move(request), std::move(done)});
      } else {
        m_refused.push_back(std::move(done));
      }
      if (!take_sleeping()) return;
    }
    wake_up();
  }

  void after(std::chrono::milliseconds delay, TimerTask task) override {
    {
      std::lock_guard<std::mutex> lock(m_mutex);
      m_new_timers.emplace_back(Clock::now() + delay, std::move(task));
      if (!take_sleeping()) return;
    }
    wake_up();
  }

  /// A request's CancelToken was cancelled (on any thread): its transfer ends at the next turn,
  /// which this wakes.
  void cancel_later(std::uint64_t serial) {
    {
      std::lock_guard<std::mutex> lock(m_mutex);
      m_cancelled.push_back(serial);
      if (!take_sleeping()) return;
    }
    wake_up();
  }

  void stop() override {
    {
      std::lock_guard<std::mutex> lock(m_mutex);
      m_stopping = true;
    }
    wake_up();
  }

  void run() override {
    const detail::RunningLoop here(this);
    for (;;) {
      if (!turn(true)) break;
    }
    shut_down();
  }

  void run_once() override {
    const detail::RunningLoop here(this);
    if (!turn(false)) {
      shut_down();
      return;
    }
    std::lock_guard<std::mutex> lock(m_mutex);
    if (!m_incoming.empty() || !m_new_timers.empty() || !m_refused.empty() ||
        !m_cancelled.empty() || m_stopping) {
      wake_up();  // queued during the turn: descriptor() stays readable for the next one
    } else {
      m_sleeping = true;
    }
  }

  /// The epoll set: readable when a socket is ready or the eventfd was written.
  int descriptor() const override { return m_sockets.descriptor(); }

  /// How long the owner may wait on descriptor() before the next run_once(): curl's deadline,
  /// the next timer, the next look at cancel flags.
  std::chrono::milliseconds timeout() const override {
    auto wait = std::chrono::milliseconds(1000);
    const auto until = [](Clock::time_point when) {
      return std::chrono::duration_cast<std::chrono::milliseconds>(
          std::max(when - Clock::now(), Clock::duration::zero()) + std::chrono::microseconds(999));
    };
    if (m_curl_deadline) wait = std::min(wait, until(*m_curl_deadline));
    if (auto next = m_timers.next()) wait = std::min(wait, until(*next));
    if (m_cancellable > 0) wait = std::min(wait, cancel_check_interval);
    return wait;
  }

  void stop_here() override {
    const detail::RunningLoop here(this);
    {
      std::lock_guard<std::mutex> lock(m_mutex);
      m_stopping = true;
    }
    shut_down();
  }

 private:
  void wake_up() {
    const std::uint64_t one = 1;
    [[maybe_unused]] const ssize_t written = ::write(m_wake, &one, sizeof one);
  }

  /// curl says which sockets to watch for what: the epoll set follows.
  static int on_socket(CURL*, curl_socket_t socket, int what, void* user, void* watched) {
    auto* loop = static_cast<Loop*>(user);
    loop->m_sockets.follow(loop->m_multi, socket, what, watched);
    return 0;
  }

  /// curl closes a socket of this loop's (CURLOPT_CLOSESOCKETFUNCTION).
  static int on_close(void* user, curl_socket_t socket) {
    static_cast<Loop*>(user)->m_sockets.forget(socket);
    return ::close(socket);
  }

  /// curl's own next deadline (a connect or transfer timeout, or "act now" after an add).
  static int on_timer(CURLM*, long timeout_ms, void* user) {
    static_cast<Loop*>(user)->m_curl_deadline =
        timeout_ms < 0 ? std::nullopt
                       : std::optional(Clock::now() + std::chrono::milliseconds(timeout_ms));
    return 0;
  }

  /// Whether the loop is in (or about to enter) epoll_wait, cleared so that one wakeup
  /// serves every submission until it polls again: a busy loop takes new work at its next
  /// turn without a wakeup's write and read per request. Called with m_mutex held.
  bool take_sleeping() {
    const bool sleeping = m_sleeping;
    m_sleeping = false;
    return sleeping;
  }

  struct Incoming {
    std::shared_ptr<const HttpRequest> request;
    ResponseHandler done;
  };
  /// A transfer in flight, in its map node, which never moves: curl's callbacks write into it.
  struct Active {
    std::unique_ptr<detail::CurlHandle> pooled;  ///< Back to m_idle when the transfer ends.
    std::shared_ptr<const HttpRequest> request;
    ResponseHandler done;
    detail::CurlTransfer transfer;
    std::uint64_t serial = 0;        ///< Its number for cancel_later (0: no CancelToken).
    std::uint64_t registration = 0;  ///< Its callback on the CancelToken.
  };

  /// What other threads queued since the loop last looked.
  struct Queued {
    std::vector<Incoming> incoming;
    std::vector<std::pair<Clock::time_point, TimerTask>> timers;
    std::vector<ResponseHandler> refused;
    std::vector<std::uint64_t> cancelled;
    bool stopping = false;
    bool empty() const { return incoming.empty() && timers.empty() && refused.empty(); }
  };

  Queued take_queued() {
    Queued queued;
    queued.incoming.swap(m_spare_incoming);  // the queue gets room, not to grow it every turn
    std::lock_guard<std::mutex> lock(m_mutex);
    queued.incoming.swap(m_incoming);
    queued.timers.swap(m_new_timers);
    queued.refused.swap(m_refused);
    queued.cancelled.swap(m_cancelled);
    queued.stopping = m_stopping;
    return queued;
  }

  /// How long the loop may wait for a socket: until curl's deadline, the next timer or the next
  /// cancellation check, and not at all when something was queued meanwhile. Marks the loop as
  /// sleeping when it will wait, so a submitter knows to wake it.
  std::chrono::milliseconds time_to_sleep(bool may_block) {
    auto wait = may_block ? timeout() : std::chrono::milliseconds(0);
    std::lock_guard<std::mutex> lock(m_mutex);
    if (!m_incoming.empty() || !m_new_timers.empty() || !m_refused.empty() ||
        !m_cancelled.empty() || m_stopping) {
      wait = std::chrono::milliseconds(0);
    }
    m_sleeping = wait.count() > 0;
    return wait;
  }

  /// One turn of the loop; false once it is stopping and has taken what was queued.
  bool turn(bool may_block) {
    Queued queued = take_queued();
    for (auto& [when, task] : queued.timers) m_timers.add(when, std::move(task));
    for (auto& done : queued.refused) complete(done, shut_down_error());
    for (auto& item : queued.incoming) {
      if (queued.stopping) {
        complete(item.done, shut_down_error());
        continue;
      }
      begin(std::move(item));
    }
    queued.incoming.clear();  // its room kept for take_queued
    if (queued.incoming.capacity() > m_spare_incoming.capacity())
      m_spare_incoming.swap(queued.incoming);
    if (queued.stopping) return false;
    for (std::uint64_t serial : queued.cancelled) cancel_now(serial);

    for (auto& task : m_timers.take_due(Clock::now())) detail::call_handler(task, false);
    int running = 0;
    if (m_curl_deadline && *m_curl_deadline <= Clock::now()) {
      m_curl_deadline.reset();
      curl_multi_socket_action(m_multi, CURL_SOCKET_TIMEOUT, 0, &running);
    }
    collect_finished();
    check_cancelled();

    const std::chrono::milliseconds wait = time_to_sleep(may_block);
    m_sockets.drop_parked();
    epoll_event events[256];
    int ready = 0;
    if (m_sockets.descriptor() >= 0)
      ready = ::epoll_wait(m_sockets.descriptor(), events, 256, static_cast<int>(wait.count()));
    else
      std::this_thread::sleep_for(wait);  // no transfer can start; only timers are served
    {
      std::lock_guard<std::mutex> lock(m_mutex);
      m_sleeping = false;
    }
    for (int i = 0; i < ready; ++i) {
      const int fd = events[i].data.fd;
      if (fd == m_wake) {
        std::uint64_t count = 0;
        [[maybe_unused]] const ssize_t read = ::read(m_wake, &count, sizeof count);
        continue;
      }
      int flags = 0;
      if (events[i].events & EPOLLIN) flags |= CURL_CSELECT_IN;
      if (events[i].events & EPOLLOUT) flags |= CURL_CSELECT_OUT;
      if (events[i].events & (EPOLLERR | EPOLLHUP)) flags |= CURL_CSELECT_ERR;
      curl_multi_socket_action(m_multi, fd, flags, &running);
    }
    collect_finished();
    return true;
  }

  void begin(Incoming item) {
    if (item.request->cancel_token.cancelled()) {
      complete(item.done,
               make_error(ErrorKind::cancelled, "cancelled before sending", item.request->url));
      return;
    }
    if (m_sockets.descriptor() < 0 || m_wake < 0) {
      complete(item.done, make_error(ErrorKind::connection_failed,
                                     "cannot create the event loop (epoll or eventfd failed: "
                                     "too many open files?)"));
      return;
    }
    std::unique_ptr<detail::CurlHandle> pooled = acquire();
    if (!pooled->get()) {
      complete(item.done, make_error(ErrorKind::connection_failed, "cannot create a curl handle"));
      return;
    }
    CURL* handle = pooled->get();
    Active& active = m_active.try_emplace(handle).first->second;
    active.pooled = std::move(pooled);
    active.request = std::move(item.request);
    active.done = std::move(item.done);
    // The loop ends a cancelled transfer itself (cancel_now, check_cancelled).
    active.transfer.prepare(*active.pooled, *active.request,
                            detail::CurlTransfer::CancelledBy::caller);
    // curl closes the connections this handle opens through on_close, which takes the socket
    // out of the parked ones first: its number may be another thread's socket a moment later.
    curl_easy_setopt(handle, CURLOPT_CLOSESOCKETFUNCTION, on_close);
    curl_easy_setopt(handle, CURLOPT_CLOSESOCKETDATA, this);
    // Over https, a server that negotiates HTTP/2 carries many requests on one connection:
    // wait for that connection rather than open another (the multi handle multiplexes).
    if (active.request->url.rfind("https://", 0) == 0)
      curl_easy_setopt(handle, CURLOPT_PIPEWAIT, 1L);
    if (curl_multi_add_handle(m_multi, handle) != CURLM_OK) {
      auto failed = m_active.extract(handle);
      release(std::move(failed.mapped().pooled));
      complete(failed.mapped().done,
               make_error(ErrorKind::connection_failed, "cannot start the transfer"));
      return;
    }
    if (active.request->cancel) ++m_cancellable;
    if (active.request->cancel_token.can_be_cancelled()) watch_token(active, handle);
  }

  /// Told by the request's CancelToken, from whichever thread cancels, through cancel_later.
  /// The callback holds the loop weakly: it may run after the loop has gone.
  void watch_token(Active& active, CURL* handle) {
    active.serial = ++m_last_serial;
    m_by_serial.emplace(active.serial, handle);
    active.registration =
        active.request->cancel_token.on_cancel([loop = weak_from_this(), serial = active.serial] {
          if (auto alive = loop.lock()) alive->cancel_later(serial);
        });
  }

  void cancel_now(std::uint64_t serial) {
    const auto found = m_by_serial.find(serial);
    if (found == m_by_serial.end()) return;  // it ended before the cancel was seen
    finish(found->second, [](Active& active) -> Result<HttpResponse> {
      return make_error(ErrorKind::cancelled, "cancelled during the transfer", active.request->url);
    });
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
      if (active.request->cancel && active.request->cancel->load()) cancelled.push_back(handle);
    }
    for (CURL* handle : cancelled) {
      finish(handle, [&](Active& active) -> Result<HttpResponse> {
        return make_error(ErrorKind::cancelled, "cancelled during the transfer",
                          active.request->url);
      });
    }
  }

  template <typename Outcome>
  void finish(CURL* handle, Outcome outcome) {
    const auto found = m_active.find(handle);
    if (found == m_active.end()) return;
    auto node = m_active.extract(found);  // out of the map, in its node: the handler may add
    Active* active = &node.mapped();
    curl_multi_remove_handle(m_multi, handle);
    if (active->request->cancel) --m_cancellable;
    if (active->serial != 0) {
      m_by_serial.erase(active->serial);
      active->request->cancel_token.forget(active->registration);
    }
    Result<HttpResponse> result = outcome(*active);
    release(std::move(active->pooled));
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
    for (Queued queued = take_queued(); !queued.empty(); queued = take_queued()) {
      for (auto& item : queued.incoming) complete(item.done, shut_down_error());
      for (auto& done : queued.refused) complete(done, shut_down_error());
      for (auto& [when, task] : queued.timers) detail::call_handler(task, true);
    }
  }

  static Error shut_down_error() {
    return make_error(ErrorKind::cancelled, "the transport shut down before the request ended");
  }

  static void complete(ResponseHandler& done, Result<HttpResponse> result) {
    detail::call_handler(done, std::move(result));
  }

  // Easy handles are reused: the connections belong to the multi handle's pool.
  std::unique_ptr<detail::CurlHandle> acquire() {
    if (m_idle.empty()) return std::make_unique<detail::CurlHandle>();
    std::unique_ptr<detail::CurlHandle> handle = std::move(m_idle.back());
    m_idle.pop_back();
    return handle;
  }
  void release(std::unique_ptr<detail::CurlHandle> handle) {
    if (handle && handle->get()) m_idle.push_back(std::move(handle));
  }

  CURLM* m_multi;
  detail::SocketSet m_sockets;
  const int m_wake;  ///< An eventfd in the epoll set: other threads write to it to wake the loop.
  std::mutex m_mutex;
  std::vector<Incoming> m_incoming;        // guarded by m_mutex
  std::vector<Incoming> m_spare_incoming;  ///< The loop thread's: empty, its room kept.
  std::vector<std::pair<Clock::time_point, TimerTask>> m_new_timers;  // guarded by m_mutex
  std::vector<ResponseHandler> m_refused;                             // guarded by m_mutex
  std::vector<std::uint64_t> m_cancelled;                             // guarded by m_mutex
  bool m_stopping = false;                                            // guarded by m_mutex
  bool m_sleeping = false;                                            // guarded by m_mutex
  // The loop thread's own:
  std::unordered_map<CURL*, Active> m_active;
  std::vector<std::unique_ptr<detail::CurlHandle>> m_idle;
  detail::TimerQueue m_timers;
  std::size_t m_cancellable = 0;
  std::unordered_map<std::uint64_t, CURL*> m_by_serial;  ///< Transfers a CancelToken may end.
  std::uint64_t m_last_serial = 0;
  Clock::time_point m_next_cancel_check{};
  std::optional<Clock::time_point> m_curl_deadline;
};

}  // namespace

std::shared_ptr<detail::LoopCore> detail::make_loop_core() {
  return std::make_shared<Loop>();
}

}  // namespace clef
