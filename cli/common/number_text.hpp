// Numbers as clef prints them for people, and as people write them in gate flags.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace clef::cli {

/// What a report shows for an undefined metric (a zero denominator).
inline constexpr const char* undefined_text = "n/a";

/// `value` with `digits` decimals ("0.875").
std::string fixed(double value, int digits);
/// The same, or undefined_text when `value` is undefined.
std::string fixed(const std::optional<double>& value, int digits);

/// A plain decimal number, as a gate's limit or a tolerance is written: an optional sign,
/// digits with at most one point, an optional exponent ("0.9", "-.5", "1e-3"). None for
/// anything else, and for a number no double holds ("1e400"): a limit of infinity is a typo.
std::optional<double> parse_decimal(std::string_view text);

}  // namespace clef::cli
