// Internal: how long a server asked clef to wait before it asks again (Retry-After and
// retry-after-ms), read as hostile text.
#pragma once

#include <chrono>
#include <optional>

#include "clef/transport.hpp"

namespace clef::detail {

/// The longest Retry-After clef represents (a day); larger or absurd values saturate to it.
inline constexpr std::chrono::milliseconds max_retry_after_value{86'400'000};

/// retry-after-ms (milliseconds), else Retry-After (seconds or an HTTP date), else nothing;
/// saturated to max_retry_after_value.
std::optional<std::chrono::milliseconds> retry_after(const HttpResponse& response);

}  // namespace clef::detail
