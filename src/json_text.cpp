#include "json_text.hpp"

namespace clef::detail {

Status append_json_string(std::string& out, std::string_view text, std::string_view where) {
  try {
    out += Json(text).dump(-1, ' ', false, Json::error_handler_t::strict);
  } catch (const Json::type_error&) {
    return make_error(ErrorKind::invalid_input, "text is not valid UTF-8", std::string(where));
  }
  return {};
}

Result<Json> parse_json(std::string_view text, ErrorKind kind, std::string_view what) {
  try {
    return Json::parse(text.begin(), text.end());
  } catch (const Json::parse_error& e) {
    // nlohmann counts bytes read, 1-based; report the 0-based offset of the offending byte.
    const std::size_t offset = e.byte > 0 ? e.byte - 1 : 0;
    std::string message = std::string(what) + " is not valid JSON";
    if (text.empty())
      message = std::string(what) + " is empty";
    else if (offset >= text.size())
      message += " (it ends too early: truncated?)";
    return make_error(kind, message, "byte " + std::to_string(offset));
  }
}

std::string dump_compact(const Json& value) {
  return value.dump(-1, ' ', false, Json::error_handler_t::replace);
}

}  // namespace clef::detail
