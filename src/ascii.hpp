// Internal: ASCII case folding for names that are ASCII by definition (header names, URL hosts,
// tags, labels): std::tolower per byte, never the locale's idea of a character.
#pragma once

#include <cctype>
#include <string>
#include <string_view>

namespace clef::detail {

inline std::string ascii_lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace clef::detail
