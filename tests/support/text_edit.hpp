// One small random edit of a text, for tests that compare two readers on many texts near a
// valid one: a byte dropped, replaced or inserted (from `bytes`), or a span of up to
// `longest_repeat` bytes written twice.
#pragma once

#include <cstddef>
#include <random>
#include <string>
#include <string_view>

namespace clef::testing {

inline std::string edited(std::string text, std::mt19937& random, std::string_view bytes,
                          std::size_t longest_repeat = 24) {
  const auto pick = [&](std::size_t n) {
    return std::uniform_int_distribution<std::size_t>(0, n - 1)(random);
  };
  const std::size_t at = pick(text.size() + 1);
  switch (pick(4)) {
    case 0:
      if (at < text.size()) text.erase(at, 1);
      break;
    case 1:
      if (at < text.size()) text[at] = bytes[pick(bytes.size())];
      break;
    case 2:
      text.insert(at, 1, bytes[pick(bytes.size())]);
      break;
    default:
      if (at < text.size()) text.insert(at, text.substr(at, pick(longest_repeat) + 1));
  }
  return text;
}

}  // namespace clef::testing
