// The asynchronous libcurl transports over curl_loop.hpp's loop: make_curl_loop() runs loops on
// threads of clef's own and spreads requests over them; make_driven_curl_loop() gives one loop
// to an application's event loop, with no thread at all.
#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "clef/async_transport.hpp"
#include "curl/curl_loop.hpp"
#include "curl/curl_transfer.hpp"
#include "transport/shared_request.hpp"

namespace clef {
namespace {

class CurlLoopTransport final : public AsyncTransport, public detail::SharedRequestTransport {
 public:
  explicit CurlLoopTransport(std::size_t threads) {
    detail::curl_global_once();
    const std::size_t cores = std::max(1u, std::thread::hardware_concurrency());
    threads = std::clamp<std::size_t>(threads, 1, cores);
    for (std::size_t i = 0; i < threads; ++i) {
      auto loop = detail::make_loop_core();
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
    start_shared(std::make_shared<const HttpRequest>(std::move(request)), std::move(done));
  }
  void start_shared(std::shared_ptr<const HttpRequest> request, ResponseHandler done) override {
    next_loop().start(std::move(request), std::move(done));
  }

  void after(std::chrono::milliseconds delay,
             std::function<void(bool shutting_down)> task) override {
    next_loop().after(delay, std::move(task));
  }

  bool running_here() const override {
    return std::any_of(m_loops.begin(), m_loops.end(),
                       [](const auto& loop) { return loop->running_here(); });
  }

 private:
  detail::LoopCore& next_loop() {
    return *m_loops[m_next.fetch_add(1, std::memory_order_relaxed) % m_loops.size()];
  }

  std::vector<std::shared_ptr<detail::LoopCore>> m_loops;
  std::vector<std::thread> m_threads;
  std::atomic<std::size_t> m_next{0};
};

/// The loop with no thread: its owner's event loop calls run_once().
class DrivenLoop final : public DrivenCurlLoop, public detail::SharedRequestTransport {
 public:
  DrivenLoop() {
    detail::curl_global_once();
    m_loop = detail::make_loop_core();
  }
  ~DrivenLoop() override { m_loop->stop_here(); }
  DrivenLoop(const DrivenLoop&) = delete;
  DrivenLoop& operator=(const DrivenLoop&) = delete;

  void start(HttpRequest request, ResponseHandler done) override {
    start_shared(std::make_shared<const HttpRequest>(std::move(request)), std::move(done));
  }
  void start_shared(std::shared_ptr<const HttpRequest> request, ResponseHandler done) override {
    m_loop->start(std::move(request), std::move(done));
  }
  void after(std::chrono::milliseconds delay,
             std::function<void(bool shutting_down)> task) override {
    m_loop->after(delay, std::move(task));
  }
  int descriptor() const override { return m_loop->descriptor(); }
  std::chrono::milliseconds timeout() const override { return m_loop->timeout(); }
  void run_once() override {
    m_owner.store(std::this_thread::get_id(), std::memory_order_relaxed);
    m_loop->run_once();
  }
  void stop() override { m_loop->stop_here(); }
  // Its owner waiting outside run_once() waits as surely for itself as a handler would: no other
  // thread turns this loop.
  bool running_here() const override {
    return m_loop->running_here() ||
           m_owner.load(std::memory_order_relaxed) == std::this_thread::get_id();
  }

 private:
  std::shared_ptr<detail::LoopCore> m_loop;
  /// The thread that last called run_once(): none until one has.
  std::atomic<std::thread::id> m_owner{};
};

}  // namespace

std::shared_ptr<AsyncTransport> make_curl_loop(std::size_t threads) {
  return std::make_shared<CurlLoopTransport>(threads);
}

std::shared_ptr<DrivenCurlLoop> make_driven_curl_loop() {
  return std::make_shared<DrivenLoop>();
}

}  // namespace clef
