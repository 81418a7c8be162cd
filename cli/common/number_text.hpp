// Numbers as clef prints them for people.
#pragma once

#include <optional>
#include <string>

namespace clef::cli {

/// What a report shows for an undefined metric (a zero denominator).
inline constexpr const char* undefined_text = "n/a";

/// `value` with `digits` decimals ("0.875").
std::string fixed(double value, int digits);
/// The same, or undefined_text when `value` is undefined.
std::string fixed(const std::optional<double>& value, int digits);

}  // namespace clef::cli
