// Text meant for a terminal (see terminal_text.hpp).
#include "common/terminal_text.hpp"

namespace clef::cli {

std::string terminal_safe(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '\n' || c == '\t')
      out += c;
    else if (byte < 0x20 || byte == 0x7f)
      out += '?';  // ESC and friends: server text must not drive the terminal
    else
      out += c;
  }
  return out;
}

std::string padded(const std::string& text, std::size_t width) {
  return text.size() >= width ? text : text + std::string(width - text.size(), ' ');
}

std::string joined(const std::vector<std::string>& words, std::string_view separator) {
  std::string text;
  for (const std::string& word : words) {
    if (!text.empty()) text += separator;
    text += word;
  }
  return text;
}

}  // namespace clef::cli
