// The implementation of clef/cancel.hpp: a cancellation flag shared by a source and its tokens,
// with the callbacks that make a loop notice it at once rather than at its next look.
#include "clef/cancel.hpp"

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <utility>

namespace clef {
namespace detail {

struct CancelState {
  std::atomic<bool> cancelled{false};
  std::mutex mutex;
  std::condition_variable finished_one;
  std::uint64_t next_registration = 1;                               // guarded by mutex
  std::unordered_map<std::uint64_t, std::function<void()>> waiting;  // guarded by mutex
  std::uint64_t running = 0;     ///< The registration whose callback cancel() is running.
  std::thread::id running_on{};  ///< And the thread it runs on.
};

}  // namespace detail

namespace {

void run_quietly(std::function<void()>& callback) noexcept {
  try {
    callback();
  } catch (...) {
    // A callback's failure must not keep the others from running, nor escape a noexcept cancel().
  }
}

}  // namespace

bool CancelToken::cancelled() const noexcept {
  return m_state && m_state->cancelled.load(std::memory_order_acquire);
}

std::uint64_t CancelToken::on_cancel(std::function<void()> callback) const {
  if (!m_state) return 0;
  {
    std::lock_guard<std::mutex> lock(m_state->mutex);
    if (!m_state->cancelled.load(std::memory_order_acquire)) {
      const std::uint64_t registration = m_state->next_registration++;
      m_state->waiting.emplace(registration, std::move(callback));
      return registration;
    }
  }
  run_quietly(callback);
  return 0;
}

void CancelToken::forget(std::uint64_t registration) const noexcept {
  if (!m_state || registration == 0) return;
  std::function<void()> forgotten;  // destroyed after the lock: it may own what locks it
  std::unique_lock<std::mutex> lock(m_state->mutex);
  auto found = m_state->waiting.find(registration);
  if (found != m_state->waiting.end()) {
    forgotten = std::move(found->second);
    m_state->waiting.erase(found);
    return;
  }
  // Running now on another thread: wait, so that what it touches may be destroyed once this
  // returns (std::stop_callback's rule). On this thread (a callback forgetting itself) it is
  // already running and cannot be waited for.
  if (m_state->running_on == std::this_thread::get_id()) return;
  m_state->finished_one.wait(lock, [&] { return m_state->running != registration; });
}

CancelSource::CancelSource() : m_state(std::make_shared<detail::CancelState>()) {}

void CancelSource::cancel() noexcept {
  detail::CancelState& state = *m_state;
  std::unique_lock<std::mutex> lock(state.mutex);
  if (state.cancelled.exchange(true, std::memory_order_acq_rel)) return;
  // One at a time, taken out under the lock: a callback forgotten before its turn never runs,
  // and the one running is known, so forget() can wait for it.
  while (!state.waiting.empty()) {
    auto next = state.waiting.begin();
    std::function<void()> callback = std::move(next->second);
    state.running = next->first;
    state.running_on = std::this_thread::get_id();
    state.waiting.erase(next);
    lock.unlock();
    run_quietly(callback);
    callback = nullptr;  // what it owned goes before forget() is told it is done
    lock.lock();
    state.running = 0;
    state.running_on = std::thread::id();
    state.finished_one.notify_all();
  }
}

bool CancelSource::cancelled() const noexcept {
  return m_state->cancelled.load(std::memory_order_acquire);
}

}  // namespace clef
