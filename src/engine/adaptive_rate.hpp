// Internal: how many requests a second a batch sends to a server that answers 429 (too many
// requests). Halving what is in flight (adaptive_limit.hpp) does not help against a rate limit:
// with quick answers even one request at a time outruns a bucket of 20 a second. So the first
// 429 starts pacing at a little under the rate the server was accepting, and clean answers raise
// it slowly until the next 429 — the sawtooth stays just under the limit, and few are refused.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <deque>
#include <optional>

namespace clef::detail {

class AdaptiveRate {
 public:
  using Clock = std::chrono::steady_clock;

  /// Requests a second to send at, or nullopt before the first 429 (no pacing).
  std::optional<double> per_second() const noexcept {
    if (m_rate <= 0) return std::nullopt;
    return m_rate;
  }

  /// A clean answer at `now`: counted in the accepted rate, and the pace grows — by kGrowth a
  /// second at first, twice that after each kDoubling of clean answers (up to kMaxGrowth), so a
  /// limit that was raised, or a first estimate that was low, is found again quickly.
  void answered(Clock::time_point now) {
    if (m_first_answer == Clock::time_point{}) m_first_answer = now;
    m_accepted.push_back(now);
    forget_before(now - kWindow);
    if (m_rate > 0 && now > m_last_growth) {
      const double seconds = std::chrono::duration<double>(now - m_last_growth).count();
      const double doublings = std::chrono::duration<double>(now - m_last_cut) / kDoubling;
      const double growth = std::min(kMaxGrowth, kGrowth * std::exp2(std::floor(doublings)));
      m_rate *= 1 + growth * std::min(seconds, 1.0);
    }
    m_last_growth = now;
  }

  /// A 429 for a request sent at `sent`. Once per round (a request sent before the last cut was
  /// sent at the old pace), the pace becomes kBelow × the rate answers were accepted at over
  /// the last kWindow (over at least kMinSpan), and at most kCut × the pace it replaces. False when
  /// too few answers have come back to know a rate: the caller then falls back to pausing.
  bool refused(Clock::time_point sent, Clock::time_point now) {
    if (m_rate > 0 && sent < m_last_cut) return true;
    forget_before(now - kWindow);
    if (m_accepted.size() < kEnoughAnswers) return m_rate > 0;
    const Clock::time_point since = std::max(m_first_answer, now - kWindow);
    const double seconds =
        std::chrono::duration<double>(std::max<Clock::duration>(now - since, kMinSpan)).count();
    const double accepted = static_cast<double>(m_accepted.size()) / seconds;
    // Still refused at the pace set last round: the accepted rate was flattered (a bucket's
    // first burst), so the pace also falls by a tenth each round until the refusals stop.
    m_rate = m_rate > 0 ? std::min(kBelow * accepted, kCut * m_rate) : kBelow * accepted;
    m_last_cut = now;
    m_last_growth = now;
    return true;
  }

 private:
  void forget_before(Clock::time_point oldest) {
    while (!m_accepted.empty() && m_accepted.front() < oldest) m_accepted.pop_front();
  }

  static constexpr std::chrono::seconds kWindow{3};
  static constexpr std::chrono::milliseconds kMinSpan{100};
  static constexpr double kCut = 0.9;
  static constexpr std::chrono::seconds kDoubling{5};
  static constexpr double kMaxGrowth = 0.2;
  static constexpr std::size_t kEnoughAnswers = 8;
  static constexpr double kBelow = 0.95;
  static constexpr double kGrowth = 0.02;

  double m_rate = 0;  ///< Requests a second; 0 = not pacing.
  std::deque<Clock::time_point> m_accepted;
  Clock::time_point m_first_answer{};
  Clock::time_point m_last_cut{};
  Clock::time_point m_last_growth{};
};

}  // namespace clef::detail
