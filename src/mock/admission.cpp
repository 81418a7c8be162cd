// The implementation of admission.hpp: the mock's capacity and rate limit.
#include "mock/admission.hpp"

#include <algorithm>

#include "mock/error_bodies.hpp"

namespace clef::mock_detail {

bool Admission::take_token(double rate) {
  std::lock_guard<std::mutex> lock(m_mutex);
  const auto now = std::chrono::steady_clock::now();
  // A bucket of one second's worth of requests (at least one), refilled continuously.
  const double burst = std::max(1.0, rate);
  if (m_tokens < 0) {
    m_tokens = burst;
  } else {
    const double seconds = std::chrono::duration<double>(now - m_last).count();
    m_tokens = std::min(burst, m_tokens + seconds * rate);
  }
  m_last = now;
  if (m_tokens < 1) return false;
  m_tokens -= 1;
  return true;
}

void Admission::bill(double usd) {
  std::lock_guard<std::mutex> lock(m_mutex);
  m_billed_usd += usd;
}

bool Admission::over_budget(const MockFaults& faults) {
  if (!faults.spend_limit_usd) return false;
  std::lock_guard<std::mutex> lock(m_mutex);
  return m_billed_usd > *faults.spend_limit_usd;
}

std::optional<Reply> Admission::admit(MockProfile shape, const MockFaults& faults,
                                      std::optional<Ticket>& ticket) {
  if (over_budget(faults)) {
    m_refused.fetch_add(1);
    // AI Gateway's own shape: `error`, not Workers AI's `errors`.
    Reply reply;
    reply.status = 429;
    reply.body = {{"success", false},
                  {"error", Json::array({{{"code", 2041}, {"message", "Spend limit exceeded"}}})}};
    return reply;
  }
  if (faults.rate_limit > 0 && !take_token(faults.rate_limit)) {
    m_refused.fetch_add(1);
    Reply reply =
        shape == MockProfile::openai
            ? error_reply(shape, 429, "Rate limit reached for requests", "rate_limit_exceeded")
            : error_reply(shape, 429, "Capacity temporarily exceeded, please try again.", "3040");
    reply.headers.emplace_back("Retry-After", "1");
    return reply;
  }
  if (faults.capacity > 0 && m_in_progress.fetch_add(1) >= faults.capacity) {
    m_in_progress.fetch_sub(1);
    m_refused.fetch_add(1);
    return error_reply(shape, 503,
                       "server busy, please try again.  maximum pending requests exceeded",
                       "QUEUE_FULL");
  }
  if (faults.capacity > 0) ticket.emplace(&m_in_progress);
  return std::nullopt;
}

}  // namespace clef::mock_detail
