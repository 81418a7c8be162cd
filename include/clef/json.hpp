// clef: JSON at the program's edge: reading what came from outside (a server, a file, stdin, a
// flag), writing it back out, and reading JSONL line by line with bounded memory.
#pragma once

#include <cstddef>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "clef/export.hpp"
#include "clef/result.hpp"

namespace clef {

/// The deepest nesting of arrays and objects clef accepts in any JSON it reads. Real requests,
/// answers and tickets nest a handful of levels; the bound keeps every later walk of the value
/// (dumping, copying, comparing) far from the stack's limit.
inline constexpr std::size_t max_json_depth = 256;

/// Parses untrusted JSON text. Never throws: invalid syntax, a number outside the range of a
/// double (`1e400`) and nesting deeper than max_json_depth are each an Error of `kind` whose
/// message says which, naming `what`, and whose `where` is "byte N" (0-based) of the fault.
CLEF_API Result<nlohmann::ordered_json> parse_json(std::string_view text, std::string_view what,
                                                   ErrorKind kind = ErrorKind::invalid_input);

/// The text of `value`: compact (indent -1), or pretty with `indent` spaces. Never throws: a
/// string holding invalid UTF-8 (a server's, a file's) has each bad byte replaced with U+FFFD.
/// For values of bounded depth (everything parse_json returns).
CLEF_API std::string dump_json(const nlohmann::ordered_json& value, int indent = -1);

/// Appends `value` as dump_json writes a number: nlohmann's shortest form that reads back as the
/// same double ("0.25", "1e-05", "2.0"); null when it is not finite. With append_json_text, for
/// writing JSON lines without building a JSON value first (clef batch writes its lines so).
CLEF_API void append_json_number(std::string& out, double value);
/// Appends `text` as dump_json writes a string: quoted and escaped, invalid UTF-8 replaced.
CLEF_API void append_json_text(std::string& out, std::string_view text);
/// The length of the well-formed UTF-8 sequence (RFC 3629: no overlong forms, no surrogates,
/// nothing above U+10FFFF) starting at text[i], a byte >= 0x80; 0 when it is not one (a stray
/// continuation byte, a lone C1 byte, a sequence cut short).
CLEF_API std::size_t utf8_sequence_length(std::string_view text, std::size_t i);
/// Whether the valid JSON `text` (one parse_json accepted) holds an integer outside
/// [-2^63, 2^64 - 1]: one a parsed value keeps only as a double, its last digits lost. Read the
/// text itself then (member_text, State::json) where the digits matter.
CLEF_API bool has_wide_integer(std::string_view text);

/// The exact text of member `key` of the JSON object `object_text` (valid JSON), the last one
/// when the key repeats, as parse_json keeps it; nullopt when there is none.
CLEF_API std::optional<std::string_view> member_text(std::string_view object_text,
                                                     std::string_view key);

/// A member of a JSON object, as the object's text holds it.
struct JsonMember {
  std::string_view key;    ///< Without its quotes; it holds no escape.
  std::string_view value;  ///< The value's exact text.
};

/// The members of the JSON object `text`, in order, read in one pass with no JSON value built —
/// for inputs that take a few members of each of many lines. nullopt when `text` is not one
/// valid JSON object (RFC 8259) whose keys hold no escape and repeat nowhere at its top level,
/// and for a few valid texts this reader leaves to parse_json (a \u escape of a surrogate, a
/// number a double cannot hold, nesting deeper than 64, over 256 members): parse_json reads or
/// explains those.
CLEF_API std::optional<std::vector<JsonMember>> json_object_members(std::string_view text);

/// One line of a line-oriented input (JSONL, CSV, text) as read_line left it.
struct Line {
  std::string text;          ///< Without its '\n'; at most the max_bytes asked for.
  bool too_long = false;     ///< The line was longer: the rest was read past, not kept.
  bool has_newline = false;  ///< False only for a last line the input cut off.
};

/// Reads the next line of `in` into `line`, keeping at most `max_bytes` of it, so a file with no
/// newline costs no more memory than that; the rest of a longer line is read past (too_long).
/// False at the end of the input, and when reading fails: then `in.bad()` is true and the line
/// is not one — an I/O error, a directory, or a line still going 8 × `max_bytes` past what was
/// kept (too_long is then set: /dev/zero, an endless line, end the reading rather than hold it
/// for ever). Never throws, whatever the stream buffer does.
///
///     clef::Line line;
///     std::size_t lines = 0, cut = 0;
///     while (clef::read_line(std::cin, line, 1 << 20)) {
///       ++lines;
///       if (line.too_long) ++cut;  // say so, and go on: the next line starts where it should
///     }
///     if (std::cin.bad()) return 2;  // the input broke off: what was read is not all of it
CLEF_API bool read_line(std::istream& in, Line& line, std::size_t max_bytes);

}  // namespace clef
