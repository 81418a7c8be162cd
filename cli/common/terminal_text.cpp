// Text meant for a terminal (see terminal_text.hpp).
#include "common/terminal_text.hpp"

#include "clef/json.hpp"

namespace clef::cli {

namespace {

/// The length of the UTF-8 sequence at `text[i]` when it must not reach a terminal as it is: a
/// C1 control (U+0080-U+009F, which some terminals obey as they would ESC) or a bidirectional
/// override or isolate (U+202A-U+202E, U+2066-U+2069: text shown in another order than it is
/// stored, so a name can look like another); 0 for anything else.
std::size_t hidden_control_at(std::string_view text, std::size_t i) {
  const auto at = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  if (at(i) == 0xC2 && i + 1 < text.size() && at(i + 1) >= 0x80 && at(i + 1) <= 0x9F) return 2;
  if (at(i) == 0xE2 && i + 2 < text.size()) {
    if (at(i + 1) == 0x80 && at(i + 2) >= 0xAA && at(i + 2) <= 0xAE) return 3;
    if (at(i + 1) == 0x81 && at(i + 2) >= 0xA6 && at(i + 2) <= 0xA9) return 3;
  }
  return 0;
}

std::string safe(std::string_view text, bool keep_line_breaks) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto byte = static_cast<unsigned char>(text[i]);
    if (keep_line_breaks && (text[i] == '\n' || text[i] == '\t')) {
      out += text[i];
    } else if (byte < 0x20 || byte == 0x7f) {
      out += '?';  // ESC and friends: text from outside must not drive the terminal
    } else if (const std::size_t length = hidden_control_at(text, i)) {
      out += '?';
      i += length - 1;
    } else if (byte >= 0x80) {
      // Only well-formed UTF-8 goes through whole; anything else is one '?' a byte.
      const std::size_t sequence = utf8_sequence_length(text, i);
      if (sequence == 0) {
        out += '?';
      } else {
        out.append(text.substr(i, sequence));
        i += sequence - 1;
      }
    } else {
      out += text[i];
    }
  }
  return out;
}

}  // namespace

std::string terminal_safe(std::string_view text) {
  return safe(text, true);
}

std::string terminal_safe_line(std::string_view text) {
  return safe(text, false);
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
