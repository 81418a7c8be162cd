// The implementation of number_text.hpp: numbers as clef prints them for people.
#include "common/number_text.hpp"

#include <cstdio>

namespace clef::cli {

std::string fixed(double value, int digits) {
  char buffer[48];
  std::snprintf(buffer, sizeof buffer, "%.*f", digits, value);
  return buffer;
}

std::string fixed(const std::optional<double>& value, int digits) {
  return value ? fixed(*value, digits) : std::string(undefined_text);
}

}  // namespace clef::cli
