// The implementation of http_date.hpp: HTTP dates and delays.
#include "util/http_date.hpp"

#include <array>
#include <cstddef>

namespace clef::detail {
namespace {

constexpr std::array<std::string_view, 12> kMonths = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                      "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
constexpr std::array<std::string_view, 7> kShortDays = {"Mon", "Tue", "Wed", "Thu",
                                                        "Fri", "Sat", "Sun"};
constexpr std::array<std::string_view, 7> kLongDays = {
    "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"};

/// Days from 1970-01-01 to y-m-d (Howard Hinnant's days_from_civil), for years 0 to 9999.
std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const std::int64_t era = y / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

bool leap(std::int64_t year) {
  return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
}

unsigned days_in(std::int64_t year, unsigned month) {
  static constexpr unsigned days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return month == 2 && leap(year) ? 29 : days[month - 1];
}

/// Reads exactly `width` digits at `at` (advancing it).
std::optional<std::int64_t> digits(std::string_view text, std::size_t& at, std::size_t width) {
  if (at + width > text.size()) return std::nullopt;
  std::int64_t value = 0;
  for (std::size_t i = 0; i < width; ++i) {
    const char c = text[at + i];
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + (c - '0');
  }
  at += width;
  return value;
}

bool literal(std::string_view text, std::size_t& at, std::string_view expected) {
  if (text.substr(at, expected.size()) != expected) return false;
  at += expected.size();
  return true;
}

std::optional<unsigned> month(std::string_view text, std::size_t& at) {
  for (std::size_t i = 0; i < kMonths.size(); ++i) {
    if (literal(text, at, kMonths[i])) return static_cast<unsigned>(i + 1);
  }
  return std::nullopt;
}

/// "HH:MM:SS" as seconds into the day.
std::optional<std::int64_t> time_of_day(std::string_view text, std::size_t& at) {
  auto hours = digits(text, at, 2);
  if (!hours || !literal(text, at, ":")) return std::nullopt;
  auto minutes = digits(text, at, 2);
  if (!minutes || !literal(text, at, ":")) return std::nullopt;
  auto seconds = digits(text, at, 2);
  // 60: a leap second, which IMF allows.
  if (!seconds || *hours > 23 || *minutes > 59 || *seconds > 60) return std::nullopt;
  return *hours * 3600 + *minutes * 60 + *seconds;
}

std::optional<std::int64_t> seconds_at(std::int64_t year, unsigned month, std::int64_t day,
                                       std::int64_t time) {
  if (year < 1 || year > 9999 || day < 1 || day > days_in(year, month)) return std::nullopt;
  return days_from_civil(year, month, static_cast<unsigned>(day)) * 86400 + time;
}

/// "Sun, 06 Nov 1994 08:49:37 GMT", after the day name and ", ".
std::optional<std::int64_t> imf_fixdate(std::string_view text, std::size_t at) {
  auto day = digits(text, at, 2);
  if (!day || !literal(text, at, " ")) return std::nullopt;
  auto mon = month(text, at);
  if (!mon || !literal(text, at, " ")) return std::nullopt;
  auto year = digits(text, at, 4);
  if (!year || !literal(text, at, " ")) return std::nullopt;
  auto time = time_of_day(text, at);
  if (!time || !literal(text, at, " GMT") || at != text.size()) return std::nullopt;
  return seconds_at(*year, *mon, *day, *time);
}

/// "06-Nov-94 08:49:37 GMT", after the long day name and ", ".
std::optional<std::int64_t> rfc850_date(std::string_view text, std::size_t at) {
  auto day = digits(text, at, 2);
  if (!day || !literal(text, at, "-")) return std::nullopt;
  auto mon = month(text, at);
  if (!mon || !literal(text, at, "-")) return std::nullopt;
  auto year = digits(text, at, 2);
  if (!year || !literal(text, at, " ")) return std::nullopt;
  auto time = time_of_day(text, at);
  if (!time || !literal(text, at, " GMT") || at != text.size()) return std::nullopt;
  return seconds_at(*year < 70 ? 2000 + *year : 1900 + *year, *mon, *day, *time);
}

/// "Nov  6 08:49:37 1994", after the day name and " ".
std::optional<std::int64_t> asctime_date(std::string_view text, std::size_t at) {
  auto mon = month(text, at);
  if (!mon || !literal(text, at, " ")) return std::nullopt;
  std::optional<std::int64_t> day;
  if (at < text.size() && text[at] == ' ') {
    ++at;
    day = digits(text, at, 1);
  } else {
    day = digits(text, at, 2);
  }
  if (!day || !literal(text, at, " ")) return std::nullopt;
  auto time = time_of_day(text, at);
  if (!time || !literal(text, at, " ")) return std::nullopt;
  auto year = digits(text, at, 4);
  if (!year || at != text.size()) return std::nullopt;
  return seconds_at(*year, *mon, *day, *time);
}

}  // namespace

std::optional<std::int64_t> parse_http_date(std::string_view text) {
  for (std::string_view day : kShortDays) {
    std::size_t at = 0;
    if (literal(text, at, day) && literal(text, at, ", ")) return imf_fixdate(text, at);
    at = 0;
    if (literal(text, at, day) && literal(text, at, " ")) return asctime_date(text, at);
  }
  for (std::string_view day : kLongDays) {
    std::size_t at = 0;
    if (literal(text, at, day) && literal(text, at, ", ")) return rfc850_date(text, at);
  }
  return std::nullopt;
}

std::optional<std::int64_t> parse_delay_seconds(std::string_view text, std::int64_t cap) {
  if (text.empty()) return std::nullopt;
  std::int64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    if (value < cap) value = value * 10 + (c - '0');
  }
  return value < cap ? value : cap;
}

}  // namespace clef::detail
