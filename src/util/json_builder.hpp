// Internal: the handler parse_json gives nlohmann's SAX parser to build the value — in time that
// grows as n log n with the members of an object, where nlohmann's own builder takes n².
//
// Why not nlohmann's json_sax_dom_parser: an ordered_json object is a vector of pairs whose key
// is const, and a member is added by a linear search for its key; so each added member looks at
// all before it, and each time the vector grows every member (its whole value) is copied, not
// moved. Measured: 100,000 members (1 MB) took 13 s to parse, and a server or a file could send
// sixteen times that. Here an object's members are gathered in a plain vector, the repeated keys
// are found by one sort, and the object is made once, at its size.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "util/json_text.hpp"

namespace clef::detail {

/// A SAX handler (nlohmann::json_sax's interface) that builds what nlohmann::ordered_json::parse
/// builds — the same value, members in the order first written, a repeated key keeping its first
/// place and its last value — and records where a parse error was instead of throwing.
class JsonBuilder {
 public:
  using number_integer_t = Json::number_integer_t;
  using number_unsigned_t = Json::number_unsigned_t;
  using number_float_t = Json::number_float_t;
  using string_t = Json::string_t;
  using binary_t = Json::binary_t;

  /// Builds into `root` (left unspecified when the parse fails).
  explicit JsonBuilder(Json& root) : m_root(root) {}

  bool null() { return add(Json(nullptr)); }
  bool boolean(bool value) { return add(Json(value)); }
  bool number_integer(number_integer_t value) { return add(Json(value)); }
  bool number_unsigned(number_unsigned_t value) { return add(Json(value)); }
  bool number_float(number_float_t value, const string_t& /*text*/) { return add(Json(value)); }
  // The parser hands its token buffer over and clears it before the next token: taken, not copied.
  bool string(string_t& value) { return add(Json(std::move(value))); }
  bool binary(binary_t& value) { return add(Json(std::move(value))); }
  bool start_object(std::size_t /*elements*/);
  bool key(string_t& name);
  bool end_object();
  bool start_array(std::size_t /*elements*/);
  bool end_array();

  template <class Exception>
  bool parse_error(std::size_t position, const std::string& last_token, const Exception& error) {
    m_position = position;
    m_token_length = last_token.size();
    m_number_overflow = error.id == 406;  // out_of_range: 1e400
    return false;
  }

  /// nlohmann's count of the bytes read when the parse failed: 1-based, one past the token.
  std::size_t position() const { return m_position; }
  std::size_t token_length() const { return m_token_length; }
  bool number_overflow() const { return m_number_overflow; }

 private:
  /// An object or an array still open. Kept when it closes, with its vectors' room, for the next
  /// one opened at the same depth.
  struct Open {
    bool object = false;
    std::string key;  ///< The key of the member whose value comes next.
    std::vector<std::pair<std::string, Json>> members;
    std::vector<Json> elements;
  };

  /// `value` in its place: the root, a member of the innermost open object, or an element.
  bool add(Json&& value);
  Open& open_next(bool object);

  Json& m_root;
  std::vector<Open> m_open;
  std::size_t m_depth = 0;  ///< How many of m_open are open now.
  std::size_t m_position = 0;
  std::size_t m_token_length = 0;
  bool m_number_overflow = false;
};

}  // namespace clef::detail
