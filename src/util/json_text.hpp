// Internal: JSON text helpers shared by the serializer and the parsers.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "clef/export.hpp"
#include "clef/json.hpp"
#include "clef/result.hpp"

// member_text and string_field are exported from libclef.so (CLEF_API) for clef_mock, which
// links the shared library or the static one.
namespace clef::detail {

using Json = nlohmann::ordered_json;

/// Whether `byte` stands for itself inside a JSON string, as the serializer writes one and as
/// the strict cursor reads one fast: printable ASCII but the quote and the backslash.
constexpr bool is_plain_string_byte(unsigned char byte) {
  return byte >= 0x20 && byte < 0x80 && byte != '"' && byte != '\\';
}

/// Appends `text` as a JSON string literal; fails on invalid UTF-8, naming `where`.
Status append_json_string(std::string& out, std::string_view text, std::string_view where);
/// The error append_json_string gives for `where`'s text that is not UTF-8.
Error not_utf8_error(std::string_view where);
/// The same, for a caller with no use for the error: false (and `out` as it was) on invalid
/// UTF-8 — a Status made for every string written cost more than a short string's bytes.
[[nodiscard]] bool try_append_json_string(std::string& out, std::string_view text);

/// The exact text of member `key` of the JSON object in `object_text` (the last one, as the
/// parser keeps the last duplicate; a key's escapes read as the parser reads them), or nullopt.
/// `object_text` must be valid JSON; this is how raw_json fields keep the bytes the server sent
/// instead of a re-dump.
CLEF_API std::optional<std::string_view> member_text(std::string_view object_text,
                                                     std::string_view key);

/// A key that one object of the valid JSON `text` holds twice (the first found), or nullopt.
std::optional<std::string> duplicate_key(std::string_view text);

/// The valid JSON `text` with the white space between its tokens (and a leading byte order mark)
/// taken out, every token as written.
std::string compact_json(std::string_view text);

/// The number at `object[key]`, or nullopt when it is missing or not a number (never throws).
inline std::optional<double> number_field(const Json& object, const char* key) {
  const auto it = object.find(key);
  if (it == object.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

/// The string at `object[key]`, or "" when it is missing or not a string (never throws).
CLEF_API std::string string_field(const Json& object, std::string_view key);

}  // namespace clef::detail
