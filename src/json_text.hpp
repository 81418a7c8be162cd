// Internal: JSON text helpers shared by the serializer and the parsers.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "clef/result.hpp"

namespace clef::detail {

using Json = nlohmann::ordered_json;

/// Appends `text` as a JSON string literal; fails on invalid UTF-8, naming `where`.
Status append_json_string(std::string& out, std::string_view text, std::string_view where);

/// Parses untrusted JSON text; the error gives the byte offset of the fault.
Result<Json> parse_json(std::string_view text, ErrorKind kind, std::string_view what);

/// Compact text of a JSON value (strings with invalid UTF-8 replaced, never throwing).
std::string dump_compact(const Json& value);

}  // namespace clef::detail
