// Internal: reading a box answer's edges and confidence, the one check for a server's answer and
// for clef's own JSON read back.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "clef/decision.hpp"
#include "clef/export.hpp"
#include "util/json_text.hpp"

namespace clef::detail {

/// Reads {"box": {"top", "bottom", "left", "right"}, "confidence"} from `answer` into `out`.
/// Returns the problem ("box.top is 1.200000, outside [0, 1]"), or "" when the box is whole:
/// every edge finite and in [0, 1], top < bottom, left < right, confidence in [0, 1]. Nothing is
/// clamped or reordered.
std::string read_box(const Json& answer, BoxAnswer& out);

/// The edges' problem by the same rules, or "" (the confidence is not looked at).
std::string box_geometry_problem(const BoxAnswer& box);

/// "top,bottom,left,right", each the shortest decimal that reads back as the same double: the
/// form of Answer::winner() and of a gold box in clef eval.
std::string box_text(const BoxAnswer& box);

/// Reads box_text's form, or a JSON array of the four numbers (white space around each number
/// allowed); the problem in `problem`.
/// Exported from libclef.so (CLEF_API) for clef_mock's rules, which give a box in this form.
CLEF_API std::optional<BoxAnswer> parse_box_text(std::string_view text, std::string& problem);

}  // namespace clef::detail
