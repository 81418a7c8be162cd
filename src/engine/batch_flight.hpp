// Internal: one batch item between its start and its delivery (batch.cpp), and the items waiting
// to be sent again (refused, moved off a failing host, held back by the rate cap or a pause),
// in the order they become due.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <deque>
#include <memory>
#include <optional>

#include "clef/request.hpp"
#include "util/sha256_bytes.hpp"

namespace clef::detail {

struct Flight {
  using Clock = std::chrono::steady_clock;
  std::size_t index = 0;
  /// Shared with the client's submission, which reads it when the answer comes: a resend after a
  /// 429 sends it again, and a copy per send would copy its images too.
  std::shared_ptr<const DecisionRequest> request;
  std::optional<Sha256> key;  ///< With dedupe: its body's digest.
  Clock::time_point first_sent{};
  Clock::time_point last_sent{};        ///< Of its latest attempt, for the adaptive limit.
  Clock::time_point not_before{};       ///< A refused item waits out its own Retry-After.
  int throttled = 0;                    ///< 429/503 answers so far.
  std::size_t host = 0;                 ///< Of the pool: where its latest attempt went.
  std::optional<std::size_t> avoid;     ///< The host that refused or failed it last.
  int attempts = 0;                     ///< Several hosts: failed attempts that spend the retries.
  std::size_t refused_connections = 0;  ///< Several hosts: connections that failed.
};

/// Items to send again: one held back (taken, but no host or slot could take it yet) goes first,
/// then the rest as each becomes due.
class WaitingFlights {
 public:
  using Clock = Flight::Clock;

  bool empty() const { return !m_held_back && m_due.empty(); }
  std::size_t size() const { return m_due.size() + (m_held_back ? 1 : 0); }

  /// Sent again in the order they become due.
  void add(std::unique_ptr<Flight> flight) {
    const auto later =
        std::upper_bound(m_due.begin(), m_due.end(), flight->not_before,
                         [](Clock::time_point due, const std::unique_ptr<Flight>& other) {
                           return due < other->not_before;
                         });
    m_due.insert(later, std::move(flight));
  }

  /// Goes first, before anything due.
  void hold_back(std::unique_ptr<Flight> flight) { m_held_back = std::move(flight); }

  /// The held-back item, else the first one due by `now`, else null.
  std::unique_ptr<Flight> take(Clock::time_point now) {
    if (!m_held_back && next_due() > now) return nullptr;
    return take_any();
  }

  /// Any item, held back or not, due or not (the batch is stopping); null when none is left.
  std::unique_ptr<Flight> take_any() {
    if (m_held_back) return std::move(m_held_back);
    if (m_due.empty()) return nullptr;
    std::unique_ptr<Flight> flight = std::move(m_due.front());
    m_due.pop_front();
    return flight;
  }

  /// When the first item waiting becomes due, or Clock::time_point::max().
  Clock::time_point next_due() const {
    return m_due.empty() ? Clock::time_point::max() : m_due.front()->not_before;
  }

 private:
  std::deque<std::unique_ptr<Flight>> m_due;
  std::unique_ptr<Flight> m_held_back;
};

}  // namespace clef::detail
