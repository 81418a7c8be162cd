// The strict cursor's string reader (util/json_cursor.hpp) reads plain bytes eight at a time:
// against the byte-at-a-time reader it replaced, at every offset of every kind of byte.
#include <gtest/gtest.h>

#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "clef/json.hpp"
#include "util/json_cursor.hpp"
#include "util/json_text.hpp"

namespace {

/// What reading one string gave: the text between its quotes (or none), whether it held an
/// escape, and where the cursor stopped.
struct Read {
  std::optional<std::string_view> text;
  bool escaped = false;
  bool ok = false;
  std::size_t position = 0;
  /// `escaped` counts only for a string read whole (the cursor says it through plain_string).
  bool operator==(const Read& other) const {
    return text == other.text && ok == other.ok && position == other.position &&
           (!ok || escaped == other.escaped);
  }
};

/// The escape after a backslash at `at` (past it), as the cursor checks one; npos when bad.
std::size_t past_escape(std::string_view text, std::size_t at) {
  if (at >= text.size()) return std::string_view::npos;
  const char c = text[at++];
  if (c != 'u')
    return std::string_view("\"\\/bfnrt").find(c) != std::string_view::npos
               ? at
               : std::string_view::npos;
  if (at + 4 > text.size()) return std::string_view::npos;
  for (std::size_t k = 0; k < 4; ++k) {
    if (std::string_view("0123456789abcdefABCDEF").find(text[at + k]) == std::string_view::npos)
      return std::string_view::npos;
  }
  if ((text[at] == 'd' || text[at] == 'D') &&
      std::string_view("89abcdefABCDEF").find(text[at + 1]) != std::string_view::npos)
    return std::string_view::npos;
  return at + 4;
}

/// The reader as it was, a byte at a time: the reference.
Read reference(std::string_view text) {
  Read read;
  if (text.empty() || text[0] != '"') return read;
  std::size_t at = 1;
  while (at < text.size()) {
    const auto byte = static_cast<unsigned char>(text[at]);
    if (clef::detail::is_plain_string_byte(byte)) {
      ++at;
    } else if (byte == '"') {
      read.text = text.substr(1, at - 1);
      read.ok = true;
      read.position = at + 1;  // and past white space, as position() reads it
      while (read.position < text.size() &&
             std::string_view(" \t\n\r").find(text[read.position]) != std::string_view::npos)
        ++read.position;
      return read;
    } else if (byte < 0x20) {
      break;
    } else if (byte == '\\') {
      read.escaped = true;
      at = past_escape(text, at + 1);
      if (at == std::string_view::npos) return Read{std::nullopt, true, false, 0};
    } else {
      const std::size_t length = clef::utf8_sequence_length(text, at);
      if (length == 0) break;
      at += length;
    }
  }
  return Read{std::nullopt, read.escaped, false, 0};
}

Read cursor(std::string_view text) {
  clef::detail::JsonCursor reader(text);
  Read read;
  read.text = reader.string_as_written();
  read.ok = reader.ok();
  if (read.ok) read.position = reader.position();
  // plain_string() reads the same string and refuses it for an escape in it.
  clef::detail::JsonCursor plain(text);
  read.escaped = read.ok && !plain.plain_string();
  return read;
}

TEST(JsonCursor, AStringReadsAsTheByteAtATimeReaderReadIt) {
  std::mt19937 random(20261207);
  const std::vector<std::string> awkward = {
      "\"",   "\\",   "\\n",      "\\u00e9",      "\\ud800",          "\\x",  "\n",   "\x01",
      "\x1f", "\x7f", "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80", "\xc3", "\xff", "\x80",
      " ",    "~"};
  std::size_t whole = 0;
  for (int round = 0; round < 200000; ++round) {
    std::string text = "\"";
    const std::size_t length = random() % 40;
    while (text.size() < length + 1) {
      if (random() % 8 == 0)
        text += awkward[random() % awkward.size()];
      else
        text += static_cast<char>('a' + random() % 26);
    }
    if (random() % 4 != 0) text += '"';  // else unterminated, or ended by an awkward quote
    if (random() % 2 == 0) text += ", \"next\": 1";
    const Read expected = reference(text);
    ASSERT_EQ(cursor(text), expected) << testing::PrintToString(text);
    whole += expected.ok;
  }
  EXPECT_GT(whole, 50000u) << "most strings end well: the test reaches the word path";
}

}  // namespace
