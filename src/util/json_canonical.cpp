// The implementation of json_canonical.hpp.
#include "util/json_canonical.hpp"

#include <charconv>
#include <cstdint>
#include <vector>

#include "clef/json.hpp"
#include "util/json_cursor.hpp"

namespace clef::detail {
namespace {

/// Whether a string's text as written is as the dump writes it: the dump escapes only '"',
/// '\\' and control characters, those with a short form by it.
bool written_as_dumped(std::string_view text) {
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\\') continue;
    if (std::string_view("\"\\bfnrt").find(text[++i]) == std::string_view::npos) return false;
  }
  return true;
}

/// Whether the number `token` (valid JSON) is as the dump writes its parsed value.
bool number_as_dumped(std::string_view token, double value) {
  if (token.find_first_of(".eE") == std::string_view::npos) {
    // An integer: the parser keeps it as a 64-bit integer when it fits, written back digit for
    // digit, except -0, which is 0.
    if (token == "-0") return false;
    const char* end = token.data() + token.size();
    if (token[0] == '-') {
      std::int64_t whole = 0;
      return std::from_chars(token.data(), end, whole).ec == std::errc();
    }
    std::uint64_t whole = 0;
    return std::from_chars(token.data(), end, whole).ec == std::errc();
  }
  std::string dumped;
  append_json_number(dumped, value);
  return dumped == token;
}

class CanonicalWriter {
 public:
  explicit CanonicalWriter(std::string_view text) : m_json(text) { m_out.reserve(text.size()); }

  std::optional<std::string> write() {
    const char first = m_json.peek();
    if ((first != '{' && first != '[') || !value(0) || !m_json.at_end()) return std::nullopt;
    return std::move(m_out);
  }

 private:
  bool value(int depth) {
    if (depth > JsonCursor::deepest) return false;
    const char c = m_json.peek();
    if (c == '"') return string();
    if (c == '{') return object(depth);
    if (c == '[') return array(depth);
    const std::size_t begin = m_json.position();
    if (c == 't' || c == 'f' || c == 'n') {
      m_json.skip();
    } else {
      const auto number = m_json.number_if_any();
      if (!number || !number_as_dumped(m_json.text_between(begin, m_json.offset()), *number))
        return false;
    }
    m_out.append(m_json.text_between(begin, m_json.offset()));
    return m_json.ok();
  }

  bool string() {
    const auto text = m_json.string_as_written();
    if (!text || !written_as_dumped(*text)) return false;
    m_out += '"';
    m_out.append(*text);
    m_out += '"';
    return true;
  }

  bool object(int depth) {
    std::vector<std::string_view> keys;
    JsonCursor::Members members(m_json);
    std::string_view key;
    m_out += '{';
    while (members.next(key)) {
      for (std::string_view seen : keys) {
        if (seen == key) return false;  // the dump keeps one of them
      }
      if (keys.size() == JsonCursor::most_members) return false;
      keys.push_back(key);
      if (keys.size() > 1) m_out += ',';
      m_out += '"';
      m_out.append(key);
      m_out += "\":";
      if (!value(depth + 1)) return false;
    }
    m_out += '}';
    return m_json.ok();
  }

  bool array(int depth) {
    JsonCursor::Elements elements(m_json);
    m_out += '[';
    bool first = true;
    while (elements.next()) {
      if (!first) m_out += ',';
      first = false;
      if (!value(depth + 1)) return false;
    }
    m_out += ']';
    return m_json.ok();
  }

  JsonCursor m_json;
  std::string m_out;
};

}  // namespace

std::optional<std::string> canonical_compact(std::string_view text) {
  return CanonicalWriter(text).write();
}

}  // namespace clef::detail
