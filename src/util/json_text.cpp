// The implementation of json_text.hpp: JSON text helpers shared by the serializer and the parsers.
#include "util/json_text.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <nlohmann/detail/input/json_sax.hpp>
#include <set>
#include <vector>

#include "util/byte_words.hpp"
#include "util/json_builder.hpp"

namespace clef::detail {
namespace {

/// The UTF-8 byte order mark, which the parser skips at the start of a text.
constexpr std::string_view utf8_bom = "\xEF\xBB\xBF";

/// The offset of the first bracket that opens level max_json_depth + 1, or nullopt. A linear
/// scan before parsing, so no deeper value is ever built.
std::optional<std::size_t> too_deep_at(std::string_view text) {
  std::size_t depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_json_depth) return i;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return std::nullopt;
}

std::size_t skip_space(std::string_view text, std::size_t i) {
  while (i < text.size() &&
         (text[i] == ' ' || text[i] == '\t' || text[i] == '\n' || text[i] == '\r'))
    ++i;
  return i;
}

/// The end of the string literal starting at text[i] == '"'.
std::size_t skip_string(std::string_view text, std::size_t i) {
  for (++i; i < text.size(); ++i) {
    if (text[i] == '\\')
      ++i;
    else if (text[i] == '"')
      return i + 1;
  }
  return text.size();
}

/// The end of the JSON value starting at text[i].
std::size_t skip_value(std::string_view text, std::size_t i) {
  if (i >= text.size()) return i;
  if (text[i] == '"') return skip_string(text, i);
  if (text[i] != '[' && text[i] != '{') {
    while (i < text.size() && text[i] != ',' && text[i] != '}' && text[i] != ']' &&
           text[i] != ' ' && text[i] != '\t' && text[i] != '\n' && text[i] != '\r')
      ++i;
    return i;
  }
  std::size_t depth = 0;
  while (i < text.size()) {
    const char c = text[i];
    if (c == '"') {
      i = skip_string(text, i);
      continue;
    }
    if (c == '[' || c == '{') ++depth;
    if ((c == ']' || c == '}') && --depth == 0) return i + 1;
    ++i;
  }
  return i;
}

/// Whether the key `quoted` (a string literal, quotes and all) is `key` once its escapes are
/// read, as the parser reads it: "st\u0061te" is "state".
bool same_key(std::string_view quoted, std::string_view key) {
  if (quoted.size() < 2) return false;
  const std::string_view raw = quoted.substr(1, quoted.size() - 2);
  if (raw.find('\\') == std::string_view::npos) return raw == key;
  auto decoded = clef::parse_json(quoted, "a key");
  return decoded && decoded->is_string() && decoded->get_ref<const std::string&>() == key;
}

/// How append_json_string writes each byte: `kind` 0 as it is, 1 as a short escape (\" \\ \b
/// \f \n \r \t), 2 the slow way (another control character, written \u00XX; from 0x80, a UTF-8
/// sequence, checked); `pair` the two bytes a kind 0 or 1 writes (a kind 0 byte and one that
/// the next overwrites).
struct JsonStringTables {
  std::array<std::uint8_t, 256> kind{};
  std::array<std::array<char, 2>, 256> pair{};
};

constexpr JsonStringTables json_string_tables = [] {
  JsonStringTables tables{};
  for (int byte = 0; byte < 256; ++byte) {
    const auto index = static_cast<std::size_t>(byte);
    tables.kind[index] = is_plain_string_byte(static_cast<unsigned char>(byte)) ? 0 : 2;
    tables.pair[index] = {static_cast<char>(byte), 0};
  }
  constexpr std::array<std::pair<char, char>, 7> escapes = {
      {{'"', '"'}, {'\\', '\\'}, {'\b', 'b'}, {'\f', 'f'}, {'\n', 'n'}, {'\r', 'r'}, {'\t', 't'}}};
  for (const auto& [byte, second] : escapes) {
    tables.kind[static_cast<unsigned char>(byte)] = 1;
    tables.pair[static_cast<unsigned char>(byte)] = {'\\', second};
  }
  return tables;
}();

/// Writes bytes[i…] from the tables at base + at until one that takes the slow way (or the end),
/// whose index it returns. A loop of its own, with nothing else live: with the slow ways in
/// it, it ran at half the speed.
std::size_t write_table_bytes(const unsigned char* bytes, std::size_t i, std::size_t size,
                              char* base, std::size_t& at) {
  std::size_t to = at;
  if constexpr (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__) {
    // The plain bytes before the next one that is not, eight at a time, copied a word at a time
    // (there is room: two bytes were made for each still to come).
    while (i + 8 <= size) {
      const std::uint64_t word = word_at(bytes + i);
      const std::uint64_t flagged = not_plain_string_bytes(word);
      std::memcpy(base + to, &word, sizeof word);
      if (flagged == 0) {
        to += 8;
        i += 8;
        continue;
      }
      const auto plain = static_cast<std::size_t>(__builtin_ctzll(flagged)) / 8;
      to += plain;
      i += plain;
      const std::uint8_t kind = json_string_tables.kind[bytes[i]];
      if (kind > 1) {
        at = to;
        return i;
      }
      std::memcpy(base + to, json_string_tables.pair[bytes[i]].data(), 2);
      to += 1u + kind;
      ++i;
    }
  }
  for (; i < size; ++i) {
    const unsigned char byte = bytes[i];
    const std::uint8_t kind = json_string_tables.kind[byte];
    if (kind > 1) break;
    std::memcpy(base + to, json_string_tables.pair[byte].data(), 2);
    to += 1u + kind;
  }
  at = to;
  return i;
}

}  // namespace

bool try_append_json_string(std::string& out, std::string_view text) {
  // Written by hand rather than through a json value's dump(): it runs for every name,
  // instruction and option of every request, and a dump copies the text twice. The output is
  // byte for byte nlohmann's (tests/serialize_test.cpp compares them on random bytes).
  //
  // Into room made once, two bytes from a table for each, without a branch on what the byte is:
  // a JSON body (a cache entry's) has a quote every few bytes, and appending each escape, or
  // branching on each quote (a misprediction each), was most of what storing an entry cost.
  static constexpr char hex[] = "0123456789abcdef";
  const std::size_t start = out.size();
  const std::size_t size = text.size();
  // Two bytes for each (a short escape's; a UTF-8 byte takes one) and the quotes; \u00XX makes
  // its own room.
  out.resize(start + 2 * size + 2);
  char* base = out.data();  // a local: stores through it cannot change it, as they could out's
  std::size_t at = start;
  base[at++] = '"';
  const auto* bytes = reinterpret_cast<const unsigned char*>(text.data());
  std::size_t i = 0;
  for (;;) {
    i = write_table_bytes(bytes, i, size, base, at);
    if (i == size) break;
    const unsigned char byte = bytes[i];
    if (byte >= 0x80) {
      const std::size_t sequence = utf8_sequence_length(text, i);
      if (sequence == 0) {
        out.resize(start);
        return false;
      }
      std::copy(text.data() + i, text.data() + i + sequence, base + at);
      at += sequence;
      i += sequence;
      continue;
    }
    out.resize(out.size() + 4);  // \u00XX: six bytes where two were made
    base = out.data();
    const char escape[6] = {'\\', 'u', '0', '0', hex[byte >> 4], hex[byte & 0xF]};
    std::copy(escape, escape + 6, base + at);
    at += 6;
    ++i;
  }
  base[at++] = '"';
  out.resize(at);
  return true;
}

Error not_utf8_error(std::string_view where) {
  return make_error(ErrorKind::invalid_input, "text is not valid UTF-8", std::string(where));
}

Status append_json_string(std::string& out, std::string_view text, std::string_view where) {
  if (try_append_json_string(out, text)) return {};
  return not_utf8_error(where);
}

std::optional<std::string_view> member_text(std::string_view text, std::string_view key) {
  std::size_t i =
      skip_space(text, text.substr(0, utf8_bom.size()) == utf8_bom ? utf8_bom.size() : 0);
  if (i >= text.size() || text[i] != '{') return std::nullopt;
  std::optional<std::string_view> found;
  i = skip_space(text, i + 1);
  while (i < text.size() && text[i] == '"') {
    const std::size_t key_end = skip_string(text, i);
    const std::string_view quoted = text.substr(i, key_end - i);
    i = skip_space(text, key_end);
    if (i >= text.size() || text[i] != ':') return found;
    i = skip_space(text, i + 1);
    const std::size_t value_end = skip_value(text, i);
    if (same_key(quoted, key)) found = text.substr(i, value_end - i);
    i = skip_space(text, value_end);
    if (i >= text.size() || text[i] != ',') break;
    i = skip_space(text, i + 1);
  }
  return found;
}

namespace {

/// Reads a text's events and keeps, for each object open, the keys seen in it.
class DuplicateKeyFinder final : public nlohmann::json_sax<Json> {
 public:
  std::optional<std::string> found;

  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override {
    m_open.emplace_back();
    return true;
  }
  bool key(string_t& name) override {
    if (!m_open.back().insert(name).second) {
      found = name;
      return false;  // the first is enough
    }
    return true;
  }
  bool end_object() override {
    m_open.pop_back();
    return true;
  }
  bool start_array(std::size_t) override { return true; }
  bool end_array() override { return true; }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override {
    return false;
  }

 private:
  std::vector<std::set<std::string>> m_open;
};

}  // namespace

std::optional<std::string> duplicate_key(std::string_view text) {
  DuplicateKeyFinder finder;
  Json::sax_parse(text.begin(), text.end(), &finder);
  return finder.found;
}

std::string compact_json(std::string_view text) {
  if (text.substr(0, utf8_bom.size()) == utf8_bom) text.remove_prefix(utf8_bom.size());
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const char c = text[i];
    if (c == '"') {
      const std::size_t end = skip_string(text, i);
      out.append(text.substr(i, end - i));
      i = end;
      continue;
    }
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r') out += c;
    ++i;
  }
  return out;
}

std::string string_field(const Json& object, std::string_view key) {
  if (!object.is_object()) return {};
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace clef::detail

namespace clef {

std::size_t utf8_sequence_length(std::string_view text, std::size_t i) {
  const auto at = [&](std::size_t k) {
    return i + k < text.size() ? static_cast<unsigned char>(text[i + k]) : 0u;
  };
  const auto continuation = [](unsigned byte) { return byte >= 0x80 && byte <= 0xBF; };
  const unsigned lead = at(0);
  unsigned low = 0x80, high = 0xBF;  // the bounds of the second byte
  std::size_t length = 0;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) low = 0xA0;
    if (lead == 0xED) high = 0x9F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) low = 0x90;
    if (lead == 0xF4) high = 0x8F;
  } else {
    return 0;
  }
  if (at(1) < low || at(1) > high) return 0;
  for (std::size_t k = 2; k < length; ++k)
    if (!continuation(at(k))) return 0;
  return length;
}

Result<nlohmann::ordered_json> parse_json(std::string_view text, std::string_view what,
                                          ErrorKind kind) {
  using detail::Json;
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    return make_error(kind, std::string(what) + " is empty", "byte 0");
  }
  // The parser takes a NUL byte for the end of its input: what follows one would pass unread.
  // No JSON text holds one (in a string it must be escaped).
  if (const auto nul = text.find('\0'); nul != std::string_view::npos) {
    return make_error(kind, std::string(what) + " is not valid JSON (a NUL byte)",
                      "byte " + std::to_string(nul));
  }
  if (auto at = detail::too_deep_at(text)) {
    return make_error(
        kind,
        std::string(what) + " nests deeper than " + std::to_string(max_json_depth) + " levels",
        "byte " + std::to_string(*at));
  }
  Json root;
  detail::JsonBuilder parser(root);
  if (Json::sax_parse(text.begin(), text.end(), &parser)) return root;
  // nlohmann counts bytes read, 1-based, one past the token: report the 0-based offset of the
  // byte at fault (for an overflowing number, its first digit).
  std::size_t offset = parser.position() > 0 ? parser.position() - 1 : 0;
  std::string message = std::string(what) + " is not valid JSON";
  if (parser.number_overflow()) {
    offset = offset >= parser.token_length() ? offset - parser.token_length() + 1 : 0;
    while (offset > 0 && offset < text.size() &&
           std::string_view("0123456789+-.eE").find(text[offset - 1]) != std::string_view::npos)
      --offset;
    message = std::string(what) + " has a number outside the range of a double";
  } else if (offset >= text.size()) {
    message += " (it ends too early: truncated?)";
  }
  return make_error(kind, message, "byte " + std::to_string(std::min(offset, text.size())));
}

bool has_wide_integer(std::string_view text) {
  // The bounds nlohmann reads exactly: int64 below zero, uint64 above it.
  constexpr std::string_view most_negative = "9223372036854775808";
  constexpr std::string_view most_positive = "18446744073709551615";
  for (std::size_t i = 0; i < text.size();) {
    const char c = text[i];
    if (c == '"') {
      i = detail::skip_string(text, i);
      continue;
    }
    if (c != '-' && (c < '0' || c > '9')) {
      ++i;
      continue;
    }
    const bool negative = c == '-';
    const std::size_t digits_start = negative ? i + 1 : i;
    std::size_t end = digits_start;
    while (end < text.size() && text[end] >= '0' && text[end] <= '9') ++end;
    const bool integer =
        end >= text.size() || (text[end] != '.' && text[end] != 'e' && text[end] != 'E');
    std::size_t next = end;
    while (next < text.size() &&
           std::string_view("0123456789+-.eE").find(text[next]) != std::string_view::npos)
      ++next;
    if (integer) {
      const std::string_view digits = text.substr(digits_start, end - digits_start);
      const std::string_view bound = negative ? most_negative : most_positive;
      if (digits.size() > bound.size() || (digits.size() == bound.size() && digits > bound))
        return true;
    }
    i = next;
  }
  return false;
}

std::optional<std::string_view> member_text(std::string_view object_text, std::string_view key) {
  return detail::member_text(object_text, key);
}

std::string dump_json(const nlohmann::ordered_json& value, int indent) {
  return value.dump(indent, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

void append_json_number(std::string& out, double value) {
  if (!std::isfinite(value)) {
    out += "null";
    return;
  }
  // The serializer's own routine (Grisu2, its exponent rules, ".0" on whole numbers), as
  // nlohmann's dump() calls it for a double.
  std::array<char, 64> digits{};
  const char* end =
      ::nlohmann::detail::to_chars(digits.data(), digits.data() + digits.size(), value);
  out.append(digits.data(), static_cast<std::size_t>(end - digits.data()));
}

void append_json_text(std::string& out, std::string_view text) {
  if (detail::append_json_string(out, text, "")) return;
  out += dump_json(
      nlohmann::ordered_json(std::string(text)));  // invalid UTF-8: the replacing writer's form
}

}  // namespace clef
