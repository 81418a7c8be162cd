// Numbers as clef prints them for people.
#pragma once

#include <string>

namespace clef::cli {

/// `value` with `digits` decimals ("0.875").
std::string fixed(double value, int digits);

}  // namespace clef::cli
