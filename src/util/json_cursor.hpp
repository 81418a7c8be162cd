// Internal: a strict one-pass reader of JSON text for fast paths: it reads what RFC 8259 allows
// and gives up — never explains — at anything else, and at a few valid things it does not read
// (a key or a string read for its value that holds an escape, a \u escape of a surrogate, a
// number a double cannot hold, nesting deeper than 64). A caller that gets no answer from it
// reads the text with parse_json, which accepts or explains it.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace clef::detail {

class JsonCursor {
 public:
  /// Deeper than this, the cursor gives up (parse_json reads to max_json_depth).
  static constexpr int deepest = 64;
  /// More members in one object than this: its readers, which look for a repeated key pair by
  /// pair, leave the object to parse_json.
  static constexpr std::size_t most_members = 256;

  explicit JsonCursor(std::string_view text) : m_text(text) {}

  /// False once the cursor gave up; every read after that fails too.
  bool ok() const { return !m_failed; }

  /// The next value's first byte (white space skipped), or '\0' at the end.
  char peek() {
    skip_space();
    return m_failed || m_at >= m_text.size() ? '\0' : m_text[m_at];
  }
  /// The offset of the next value (white space skipped), for a span of the text.
  std::size_t position();
  /// The offset just past what was read (a value's end, for a span of the text).
  std::size_t offset() const { return m_at; }
  std::string_view text_between(std::size_t begin, std::size_t end) const {
    return m_text.substr(begin, end - begin);
  }

  /// Reads a string with no escape in it; nullopt (and the cursor gives up) otherwise.
  std::optional<std::string_view> plain_string();
  /// Reads a string, escapes checked, not decoded: its text between the quotes, as written.
  std::optional<std::string_view> string_as_written();
  /// Reads the next value if it is a number, as parse_json's value reads as a double; nullopt,
  /// reading nothing, when the next value is not a number.
  std::optional<double> number_if_any();
  /// Reads the next value, whatever it is, checking it.
  void skip();
  /// Whether only white space is left.
  bool at_end();

  /// The members of the object that comes next, one key at a time: `while (m.next(key))`, the
  /// value read by the caller before the next call.
  class Members {
   public:
    explicit Members(JsonCursor& cursor);
    /// Reads the next key and its colon; false at the end of the object (or when the cursor
    /// gave up). Keys with escapes give up.
    bool next(std::string_view& key) {
      if (!m_cursor.ok()) return false;
      if (m_first) {
        m_first = false;
        if (m_cursor.eat('}')) return false;
      } else if (!m_cursor.eat(',')) {
        if (!m_cursor.eat('}')) m_cursor.fail();
        return false;
      }
      auto name = m_cursor.plain_string();
      if (!name || !m_cursor.eat(':')) return m_cursor.fail();
      key = *name;
      return true;
    }

   private:
    JsonCursor& m_cursor;
    bool m_first = true;
  };

  /// The elements of the array that comes next: `while (e.next())`, each read by the caller
  /// before the next call.
  class Elements {
   public:
    explicit Elements(JsonCursor& cursor);
    /// Whether another element comes (its comma read); false at the end of the array.
    bool next();

   private:
    JsonCursor& m_cursor;
    bool m_first = true;
  };

 private:
  bool fail() {
    m_failed = true;
    return false;
  }
  // Inline, as the few below: a reply's read is mostly these, called a few dozen times each.
  void skip_space() {
    while (m_at < m_text.size()) {
      const char c = m_text[m_at];
      if (c != ' ' && c != '\n' && c != '\r' && c != '\t') return;
      ++m_at;
    }
  }
  bool eat(char c) {
    if (peek() != c) return false;
    ++m_at;
    return true;
  }
  /// Reads a string; `escaped` tells whether it held an escape (checked, not decoded).
  std::optional<std::string_view> string(bool& escaped);
  bool escape();
  bool literal(std::string_view word);
  void skip_at(int depth);

  std::string_view m_text;
  std::size_t m_at = 0;
  bool m_failed = false;
};

}  // namespace clef::detail
