// Internal: the mock's capacity, rate limit and spend limit — how a busy or paid-up server refuses
// work: a decision past `capacity` at once gets 503 (an Ollama whose queue is full), one past the
// token bucket of `rate_limit` a second gets 429 with Retry-After: 1 (Workers AI's capacity code
// 3040), and one after the neurons billed passed `spend_limit_usd` gets AI Gateway's 2041.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <mutex>
#include <optional>

#include "clef/mock.hpp"
#include "mock/reply.hpp"

namespace clef::mock_detail {

class Admission {
 public:
  /// A decision that may go on holds a Ticket until it is answered (its place in `capacity`).
  class Ticket {
   public:
    explicit Ticket(std::atomic<std::size_t>* held) : m_held(held) {}
    Ticket(Ticket&& other) noexcept : m_held(other.m_held) { other.m_held = nullptr; }
    Ticket& operator=(Ticket&&) = delete;
    ~Ticket() {
      if (m_held) m_held->fetch_sub(1);
    }

   private:
    std::atomic<std::size_t>* m_held;
  };

  /// A Ticket, or the refusal `shape` answers with when the server is full or over its rate.
  std::optional<Reply> admit(MockProfile shape, const MockFaults& faults,
                             std::optional<Ticket>& ticket);

  /// Decisions refused so far (every limit), for a test to read.
  std::size_t refused() const noexcept { return m_refused.load(); }

  /// A decision answered for `usd` (its measured neurons): toward MockFaults::spend_limit_usd.
  void bill(double usd);

 private:
  bool take_token(double rate);
  bool over_budget(const MockFaults& faults);

  std::atomic<std::size_t> m_in_progress{0};
  std::atomic<std::size_t> m_refused{0};
  std::mutex m_mutex;
  double m_tokens = -1;  ///< -1: not started (a full bucket).
  double m_billed_usd = 0;
  std::chrono::steady_clock::time_point m_last{};
};

}  // namespace clef::mock_detail
