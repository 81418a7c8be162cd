// Internal: how many requests a batch keeps in flight against a server that pushes back. AIMD,
// as TCP does with its window: a refusal (503) cuts the limit to 0.7 of it (CUBIC's factor:
// halving, against a server that takes 2 at once, left it under 2 a quarter of the time), each
// clean answer adds 1/(4·limit) (a quarter more per round of answers), never above the cap the
// caller set (-j).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>

namespace clef::detail {

class AdaptiveLimit {
 public:
  using Clock = std::chrono::steady_clock;

  explicit AdaptiveLimit(std::size_t cap)
      : m_cap(static_cast<double>(std::max<std::size_t>(cap, 1))), m_allowed(m_cap) {}

  /// Requests that may be in flight now: at least one.
  std::size_t allowed() const noexcept {
    return std::max<std::size_t>(1, static_cast<std::size_t>(m_allowed));
  }

  /// The server refused a request sent at `sent` while `in_flight` others were out. Cuts the
  /// limit once per round: refusals of requests sent before the last cut were sent under the
  /// old limit, and cutting again for each would collapse it to one for a single burst.
  void refused(Clock::time_point sent, Clock::time_point now, std::size_t in_flight) noexcept {
    if (sent < m_last_cut) return;
    m_allowed = std::max(1.0, std::min(m_allowed, static_cast<double>(in_flight + 1)) * kCut);
    m_last_cut = now;
  }

  /// A clean answer: one more in flight per round of answers, up to the cap.
  void answered() noexcept { m_allowed = std::min(m_cap, m_allowed + 1.0 / (4 * m_allowed)); }

 private:
  static constexpr double kCut = 0.7;
  const double m_cap;
  double m_allowed;
  Clock::time_point m_last_cut{};
};

}  // namespace clef::detail
