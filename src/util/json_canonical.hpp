// Internal: a JSON text in the form its parsed value is written in, found without parsing it
// into a value — for a state given as text, which clef sends as its parsed value is written
// (State::json), and which is most often written that way already, give or take white space.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace clef::detail {

/// dump_json(parse_json(text)) for an object or array `text`, made by copying its tokens when
/// each is already in the form the dump writes: strings with no escapes but \" \\ \b \f \n \r
/// \t, integers that fit 64 bits (not -0), fractions written as the dump writes them (12.5,
/// not 12.50 or 1.25e1), no key twice in an object, depth ≤ 64 (json_cursor.hpp's other limits
/// too). nullopt for anything else, and for invalid JSON: parse the text then.
std::optional<std::string> canonical_compact(std::string_view text);

}  // namespace clef::detail
