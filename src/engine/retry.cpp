// The implementation of retry.hpp: how long to wait before the next attempt.
#include "engine/retry.hpp"

#include <algorithm>

namespace clef::detail {

std::chrono::milliseconds backoff_delay(const RetryPolicy& policy, int retry,
                                        std::optional<std::chrono::milliseconds> retry_after,
                                        std::mt19937_64& random) {
  using std::chrono::milliseconds;
  if (retry_after) return std::max(*retry_after, milliseconds(0));
  long long delay = policy.initial_backoff.count();
  for (int i = 1; i < retry && delay < policy.max_backoff.count(); ++i) delay *= 2;
  delay = std::min(delay, static_cast<long long>(policy.max_backoff.count()));
  if (policy.jitter && delay > 1) {
    std::uniform_int_distribution<long long> pick(delay / 2, delay);
    delay = pick(random);
  }
  return milliseconds(delay);
}

bool is_throttling(const Error& error) noexcept {
  return error.kind == ErrorKind::rate_limited ||
         (error.kind == ErrorKind::server_error && error.http_status == 503);
}

}  // namespace clef::detail
