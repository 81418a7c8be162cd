// The implementation of retry_after.hpp: how long a server asked clef to wait.
#include "wire/retry_after.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <ctime>
#include <string>

#include "util/ascii.hpp"
#include "util/http_date.hpp"

namespace clef::detail {
namespace {

/// A non-negative decimal number as retry-after-ms writes one ("1500", "1500.5"): digits, and
/// at most one '.' between digits; nothing strtod would take besides (hex, exponents, inf).
std::optional<double> parse_number(const std::string& text) {
  const auto dot = text.find('.');
  const auto is_digits = [](std::string_view part) {
    return !part.empty() &&
           std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  const std::string_view whole = std::string_view(text).substr(0, dot);
  if (!is_digits(whole)) return std::nullopt;
  if (dot != std::string::npos && !is_digits(std::string_view(text).substr(dot + 1)))
    return std::nullopt;
  return std::strtod(text.c_str(), nullptr);
}

/// `count` units of `unit_ms` milliseconds, saturated to max_retry_after_value (no overflow).
std::chrono::milliseconds saturated_ms(double count, double unit_ms) {
  const double ms = count * unit_ms;
  const auto cap = static_cast<double>(max_retry_after_value.count());
  return std::chrono::milliseconds(static_cast<long long>(ms >= cap ? cap : ms));
}

}  // namespace

std::optional<std::chrono::milliseconds> retry_after(const HttpResponse& response) {
  using std::chrono::milliseconds;
  const std::int64_t cap_ms = max_retry_after_value.count();
  // retry-after-ms (OpenAI's SDKs, not an RFC): a whole or decimal number of milliseconds.
  const std::string ms_header = response.header("retry-after-ms");
  if (auto ms = parse_number(std::string(trimmed_space(ms_header)))) return saturated_ms(*ms, 1);
  // RFC 9110 §10.2.3: delay-seconds (digits only: "0x10" and "1e3" are not) or an HTTP-date.
  const std::string header = response.header("retry-after");
  const std::string_view value = trimmed_space(header);
  if (value.empty()) return std::nullopt;
  if (auto seconds = parse_delay_seconds(value, cap_ms / 1000))
    return milliseconds(*seconds * 1000);
  const auto when = parse_http_date(value);
  if (!when) return std::nullopt;
  // Whole seconds, compared in 64 bits: a date in 9999 waits the cap, never overflows a clock.
  const std::int64_t now = static_cast<std::int64_t>(std::time(nullptr));
  const std::int64_t wait = std::clamp<std::int64_t>(*when - now, 0, cap_ms / 1000);
  return milliseconds(wait * 1000);
}

}  // namespace clef::detail
