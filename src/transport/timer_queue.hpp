// Internal: the timers of an event loop — tasks due at a time point, earliest first. Not
// thread-safe: its loop owns it.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <queue>
#include <vector>

namespace clef::detail {

class TimerQueue {
 public:
  using Clock = std::chrono::steady_clock;
  using Task = std::function<void(bool shutting_down)>;

  void add(Clock::time_point when, Task task) {
    m_timers.push(Timer{when, m_sequence++, std::move(task)});
  }
  /// When the earliest task is due, if there is one.
  std::optional<Clock::time_point> next() const {
    if (m_timers.empty()) return std::nullopt;
    return m_timers.top().when;
  }
  /// The tasks due at `now`, removed, in the order they were due (ties: as added).
  std::vector<Task> take_due(Clock::time_point now) {
    std::vector<Task> due;
    while (!m_timers.empty() && m_timers.top().when <= now) {
      due.push_back(std::move(const_cast<Timer&>(m_timers.top()).task));
      m_timers.pop();
    }
    return due;
  }
  std::vector<Task> take_all() { return take_due(Clock::time_point::max()); }
  bool empty() const { return m_timers.empty(); }

 private:
  struct Timer {
    Clock::time_point when;
    std::uint64_t sequence;
    Task task;
    bool operator>(const Timer& other) const {
      return when != other.when ? when > other.when : sequence > other.sequence;
    }
  };
  std::priority_queue<Timer, std::vector<Timer>, std::greater<Timer>> m_timers;
  std::uint64_t m_sequence = 0;
};

/// Calls `handler(args…)`; an exception escaping it is discarded (async_transport.hpp says
/// why), so one caller's bug never stops a loop that serves everyone.
template <typename Handler, typename... Args>
void call_handler(Handler& handler, Args&&... args) noexcept {
  try {
    handler(std::forward<Args>(args)...);
  } catch (...) {
  }
}

}  // namespace clef::detail
