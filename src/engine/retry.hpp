// Internal: how long to wait before the next attempt.
#pragma once

#include <chrono>
#include <optional>
#include <random>

#include "clef/options.hpp"

namespace clef::detail {

/// Delay before retry number `retry` (1 = the first retry): the server's Retry-After when it
/// gave one, else initial·2^(retry−1) capped at max_backoff, with full jitter in [d/2, d].
std::chrono::milliseconds backoff_delay(const RetryPolicy& policy, int retry,
                                        std::optional<std::chrono::milliseconds> retry_after,
                                        std::mt19937_64& random);

/// A 429 or a 503: the server asks for less traffic (RetryPolicy::retry_throttling).
bool is_throttling(const Error& error) noexcept;

}  // namespace clef::detail
