// clef: reading JSON that came from outside the program (a server, a file, stdin, a flag).
#pragma once

#include <cstddef>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "clef/result.hpp"

namespace clef {

/// The deepest nesting of arrays and objects clef accepts in any JSON it reads. Real requests,
/// answers and tickets nest a handful of levels; the bound keeps every later walk of the value
/// (dumping, copying, comparing) far from the stack's limit.
inline constexpr std::size_t max_json_depth = 256;

/// Parses untrusted JSON text. Never throws: invalid syntax, a number outside the range of a
/// double (`1e400`) and nesting deeper than max_json_depth are each an Error of `kind` whose
/// message says which, naming `what`, and whose `where` is "byte N" (0-based) of the fault.
Result<nlohmann::ordered_json> parse_json(std::string_view text, std::string_view what,
                                          ErrorKind kind = ErrorKind::invalid_input);

}  // namespace clef
