// What request.hpp declares beyond plain data: KeepAlive's reading of Ollama's durations.
#include "clef/request.hpp"

#include <cctype>

#include "util/json_text.hpp"

namespace clef {
namespace {

/// Longer values are refused before they are scanned: no real duration is this long.
constexpr std::size_t max_keep_alive_length = 100;

bool is_digit(char c) {
  return std::isdigit(static_cast<unsigned char>(c)) != 0;
}

/// "-12": whole seconds, as Ollama reads a bare number (at most 15 digits: no overflow).
bool is_whole_seconds(std::string_view text) {
  if (!text.empty() && text.front() == '-') text.remove_prefix(1);
  if (text.empty() || text.size() > 15) return false;
  for (char c : text)
    if (!is_digit(c)) return false;
  return true;
}

/// Go's time.ParseDuration grammar, scanned once from left to right (a regular expression
/// engine that backtracks or recurses per character has no place on a flag's text): an
/// optional sign, then one or more number+unit pairs, a number being "5", "5.", "5.5" or ".5".
bool is_go_duration(std::string_view text) {
  static constexpr std::string_view units[] = {"ns", "us", "\xC2\xB5s", "\xCE\xBCs", "ms",
                                               "s",  "m",  "h"};  // longest first where they share
  std::size_t at = 0;
  if (at < text.size() && (text[at] == '-' || text[at] == '+')) ++at;
  if (at == text.size()) return false;
  while (at < text.size()) {
    std::size_t digits = 0;
    while (at < text.size() && is_digit(text[at])) ++at, ++digits;
    if (at < text.size() && text[at] == '.') {
      ++at;
      while (at < text.size() && is_digit(text[at])) ++at, ++digits;
    }
    if (digits == 0) return false;
    bool unit = false;
    for (std::string_view name : units) {
      if (text.substr(at, name.size()) == name) {
        at += name.size();
        unit = true;
        break;
      }
    }
    if (!unit) return false;
  }
  return true;
}

}  // namespace

KeepAlive KeepAlive::seconds(long long seconds) {
  return KeepAlive(std::to_string(seconds));
}

Result<KeepAlive> KeepAlive::parse(std::string_view text) {
  const std::string value(text.substr(0, max_keep_alive_length));
  if (text.size() <= max_keep_alive_length && is_whole_seconds(text))
    return KeepAlive::seconds(std::stoll(value));
  if (text.size() > max_keep_alive_length || !is_go_duration(text)) {
    return make_error(ErrorKind::invalid_input,
                      "keep_alive \"" + value + (text.size() > value.size() ? "…" : "") +
                          "\" is neither whole seconds nor a duration with a unit (\"5m\", "
                          "\"1h30m\", \"-1m\")",
                      "keep_alive");
  }
  std::string wire;
  (void)detail::append_json_string(wire, value, "keep_alive");
  return KeepAlive(std::move(wire));
}

}  // namespace clef
