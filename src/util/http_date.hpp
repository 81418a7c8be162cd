// Internal: HTTP's dates and delays as RFC 9110 writes them (Retry-After), read without the C
// library's time conversions, which overflow past 2262 on a 64-bit nanosecond clock.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace clef::detail {

/// Seconds since 1970-01-01 of an HTTP-date in any of the three forms a recipient must accept
/// (RFC 9110 §5.6.7): IMF-fixdate "Sun, 06 Nov 1994 08:49:37 GMT", RFC 850
/// "Sunday, 06-Nov-94 08:49:37 GMT" (a two-digit year read as 1970-2069), asctime
/// "Sun Nov  6 08:49:37 1994". Years 1 to 9999; nullopt for anything else, a day the month does
/// not have included.
std::optional<std::int64_t> parse_http_date(std::string_view text);

/// delay-seconds (RFC 9110 §10.2.3): one or more digits and nothing else (no sign, no
/// fraction, no hex), saturated at `cap`.
std::optional<std::int64_t> parse_delay_seconds(std::string_view text, std::int64_t cap);

}  // namespace clef::detail
