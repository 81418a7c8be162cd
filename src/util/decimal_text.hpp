// Internal: a decimal number as people write one in a gate (a --require limit, a tolerance).
#pragma once

#include <optional>
#include <string_view>

namespace clef::detail {

/// A plain decimal number: an optional sign, digits with at most one point, an optional
/// exponent ("0.9", "-.5", "1e-3"). None for anything else, and for a number no double holds
/// ("1e400"): a limit of infinity is a typo.
std::optional<double> parse_decimal(std::string_view text);

}  // namespace clef::detail
