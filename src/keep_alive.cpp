#include <regex>

#include "clef/request.hpp"
#include "json_text.hpp"

namespace clef {

KeepAlive KeepAlive::seconds(long long seconds) {
  return KeepAlive(std::to_string(seconds));
}

Result<KeepAlive> KeepAlive::parse(std::string_view text) {
  // Go's time.ParseDuration grammar: an optional sign, then one or more number+unit pairs.
  static const std::regex go_duration(R"(^[-+]?((\d+(\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h))+$)");
  static const std::regex integer(R"(^-?\d{1,15}$)");
  const std::string value(text);
  if (std::regex_match(value, integer)) return KeepAlive::seconds(std::stoll(value));
  if (value == "0") return KeepAlive::seconds(0);
  if (!std::regex_match(value, go_duration)) {
    return make_error(ErrorKind::invalid_input,
                      "keep_alive \"" + value +
                          "\" is neither whole seconds nor a duration with a unit (\"5m\", "
                          "\"1h30m\", \"-1m\")",
                      "keep_alive");
  }
  std::string wire;
  (void)detail::append_json_string(wire, value, "keep_alive");
  return KeepAlive(std::move(wire));
}

}  // namespace clef
