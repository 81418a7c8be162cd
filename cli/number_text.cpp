#include "number_text.hpp"

#include <cstdio>

namespace clef::cli {

std::string fixed(double value, int digits) {
  char buffer[48];
  std::snprintf(buffer, sizeof buffer, "%.*f", digits, value);
  return buffer;
}

}  // namespace clef::cli
