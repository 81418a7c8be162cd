// The implementation of json_cursor.hpp.
#include "util/json_cursor.hpp"

#include <charconv>
#include <cstdint>

#include "util/byte_words.hpp"
#include "util/json_text.hpp"

namespace clef::detail {
namespace {

bool is_decimal_digit(char c) {
  return c >= '0' && c <= '9';
}

bool is_hex_digit(char c) {
  return is_decimal_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/// is_plain_string_byte as a table: one load a byte in the loop that reads a string.
struct PlainBytes {
  bool plain[256] = {};
  constexpr PlainBytes() {
    for (int byte = 0; byte < 256; ++byte)
      plain[byte] = is_plain_string_byte(static_cast<unsigned char>(byte));
  }
};
constexpr PlainBytes plain_bytes;

}  // namespace

std::size_t JsonCursor::position() {
  skip_space();
  return m_at;
}

bool JsonCursor::at_end() {
  return peek() == '\0' && m_at == m_text.size() && !m_failed;
}

bool JsonCursor::escape() {
  // m_text[m_at] is the byte after the backslash.
  if (m_at >= m_text.size()) return fail();
  const char c = m_text[m_at++];
  if (c != 'u') return std::string_view("\"\\/bfnrt").find(c) != std::string_view::npos || fail();
  if (m_at + 4 > m_text.size()) return fail();
  for (std::size_t k = 0; k < 4; ++k) {
    if (!is_hex_digit(m_text[m_at + k])) return fail();
  }
  // A surrogate must pair with the next escape; the parser reads those, not this cursor.
  const char first = m_text[m_at];
  const char second = m_text[m_at + 1];
  if ((first == 'd' || first == 'D') &&
      std::string_view("89abcdefABCDEF").find(second) != std::string_view::npos) {
    return fail();
  }
  m_at += 4;
  return true;
}

std::optional<std::string_view> JsonCursor::string(bool& escaped) {
  escaped = false;
  if (!eat('"')) return fail(), std::nullopt;
  const std::size_t begin = m_at;
  const std::size_t size = m_text.size();
  while (m_at < size) {
    if constexpr (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__) {
      // Plain bytes eight at a time, up to the next that is not: a state's text is mostly them.
      while (m_at + 8 <= size) {
        const std::uint64_t flagged = not_plain_string_bytes(word_at(m_text.data() + m_at));
        if (flagged != 0) {
          m_at += static_cast<std::size_t>(__builtin_ctzll(flagged)) / 8;
          break;
        }
        m_at += 8;
      }
      if (m_at >= size) break;
    }
    const auto byte = static_cast<unsigned char>(m_text[m_at]);
    if (plain_bytes.plain[byte]) {
      ++m_at;
      continue;
    }
    if (byte == '"') return m_text.substr(begin, m_at++ - begin);
    if (byte < 0x20) break;  // a control character must be escaped
    if (byte == '\\') {
      escaped = true;
      ++m_at;
      if (!escape()) return std::nullopt;
    } else {  // past 0x7f: a whole UTF-8 character
      const std::size_t length = utf8_sequence_length(m_text, m_at);
      if (length == 0) break;
      m_at += length;
    }
  }
  fail();
  return std::nullopt;
}

std::optional<std::string_view> JsonCursor::plain_string() {
  bool escaped = false;
  auto text = string(escaped);
  if (escaped) return fail(), std::nullopt;
  return text;
}

std::optional<std::string_view> JsonCursor::string_as_written() {
  bool escaped = false;
  return string(escaped);
}

std::optional<double> JsonCursor::number_if_any() {
  const char c = peek();
  if (c != '-' && !is_decimal_digit(c)) return std::nullopt;
  // -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?, as RFC 8259 has it; from_chars takes more.
  const std::size_t begin = m_at;
  std::size_t i = m_at + (c == '-' ? 1 : 0);
  const auto digits = [&] {
    const std::size_t start = i;
    while (i < m_text.size() && is_decimal_digit(m_text[i])) ++i;
    return i - start;
  };
  if (i < m_text.size() && m_text[i] == '0') {
    ++i;
  } else if (digits() == 0) {
    return fail(), std::nullopt;
  }
  bool whole = true;
  if (i < m_text.size() && m_text[i] == '.') {
    ++i;
    whole = false;
    if (digits() == 0) return fail(), std::nullopt;
  }
  if (i < m_text.size() && (m_text[i] == 'e' || m_text[i] == 'E')) {
    ++i;
    whole = false;
    if (i < m_text.size() && (m_text[i] == '+' || m_text[i] == '-')) ++i;
    if (digits() == 0) return fail(), std::nullopt;
  }
  double value = 0;
  const auto [end, error] = std::from_chars(m_text.data() + begin, m_text.data() + i, value);
  // Out of a double's range (above or below): the parser refuses one and keeps the other.
  if (error != std::errc() || end != m_text.data() + i) return fail(), std::nullopt;
  m_at = i;
  // The parser reads "-0" as the integer 0, whose double is +0.
  return whole ? value + 0.0 : value;
}

bool JsonCursor::literal(std::string_view word) {
  if (m_text.substr(m_at, word.size()) != word) return fail();
  m_at += word.size();
  return true;
}

void JsonCursor::skip() {
  skip_at(0);
}

void JsonCursor::skip_at(int depth) {
  const char c = peek();
  bool escaped = false;
  switch (c) {
    case '"':
      string(escaped);
      return;
    case 't':
      literal("true");
      return;
    case 'f':
      literal("false");
      return;
    case 'n':
      literal("null");
      return;
    case '[':
      if (depth >= deepest) return void(fail());
      ++m_at;
      if (eat(']')) return;
      do {
        skip_at(depth + 1);
      } while (!m_failed && eat(','));
      if (!eat(']')) fail();
      return;
    case '{': {
      if (depth >= deepest) return void(fail());
      ++m_at;
      if (eat('}')) return;
      do {
        string(escaped);
        if (!eat(':')) return void(fail());
        skip_at(depth + 1);
      } while (!m_failed && eat(','));
      if (!eat('}')) fail();
      return;
    }
    default:
      if (!number_if_any()) fail();
  }
}

JsonCursor::Members::Members(JsonCursor& cursor) : m_cursor(cursor) {
  if (!m_cursor.eat('{')) m_cursor.fail();
}

JsonCursor::Elements::Elements(JsonCursor& cursor) : m_cursor(cursor) {
  if (!m_cursor.eat('[')) m_cursor.fail();
}

bool JsonCursor::Elements::next() {
  if (!m_cursor.ok()) return false;
  if (m_first) {
    m_first = false;
    return !m_cursor.eat(']');
  }
  if (m_cursor.eat(',')) return true;
  if (!m_cursor.eat(']')) m_cursor.fail();
  return false;
}

}  // namespace clef::detail
