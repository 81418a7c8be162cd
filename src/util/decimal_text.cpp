// The implementation of decimal_text.hpp: a decimal number as people write one in a gate.
#include "util/decimal_text.hpp"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <string>

namespace clef::detail {
namespace {

bool digit(char c) {
  return std::isdigit(static_cast<unsigned char>(c)) != 0;
}

/// Skips a run of digits from `at`; how many there were.
std::size_t digits(std::string_view text, std::size_t& at) {
  const std::size_t start = at;
  while (at < text.size() && digit(text[at])) ++at;
  return at - start;
}

}  // namespace

std::optional<double> parse_decimal(std::string_view text) {
  std::size_t at = 0;
  if (at < text.size() && (text[at] == '+' || text[at] == '-')) ++at;
  std::size_t mantissa = digits(text, at);
  if (at < text.size() && text[at] == '.') {
    ++at;
    mantissa += digits(text, at);
  }
  if (mantissa == 0) return std::nullopt;
  if (at < text.size() && (text[at] == 'e' || text[at] == 'E')) {
    ++at;
    if (at < text.size() && (text[at] == '+' || text[at] == '-')) ++at;
    if (digits(text, at) == 0) return std::nullopt;
  }
  if (at != text.size()) return std::nullopt;
  // The syntax is checked above, so strtod reads all of it (a std::string ends it with a NUL).
  const double value = std::strtod(std::string(text).c_str(), nullptr);
  if (!std::isfinite(value)) return std::nullopt;
  return value;
}

}  // namespace clef::detail
