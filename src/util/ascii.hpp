// Internal: byte-wise ASCII helpers for text that is ASCII by definition (header names and
// values, URL hosts, tags, labels, ids): never the locale's idea of a character.
#pragma once

#include <string>
#include <string_view>

namespace clef::detail {

inline char ascii_lower(char c) {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

inline std::string ascii_lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = ascii_lower(c);
  return out;
}

/// `text` without the spaces, tabs, CRs and LFs around it ("" when that is all it holds).
/// Whether `token` is what a Bearer credential may be: visible ASCII only (no space, no control
/// character, no byte past 0x7e). Empty is bare.
inline bool is_bare_token(std::string_view token) {
  for (char c : token) {
    if (c < 0x21 || c > 0x7e) return false;  // char may be signed: bytes past 0x7f are negative
  }
  return true;
}

inline std::string_view trimmed_space(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return {};
  return text.substr(first, text.find_last_not_of(" \t\r\n") - first + 1);
}

/// Whether `text` holds a C0 control character or DEL (a line break in a header, a token).
inline bool has_control_characters(std::string_view text) {
  for (const char c : text) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return true;
  }
  return false;
}

/// `text` with each C0 control character and DEL shown as '?', as the CLI shows them: text from a
/// file or a request, quoted in a message, cannot drive the terminal that prints it.
inline std::string controls_shown(std::string text) {
  for (char& c : text)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  return text;
}

/// Whether `text` is non-empty and only ASCII letters and digits.
inline bool is_ascii_alphanumeric(std::string_view text) {
  for (const char c : text) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))) return false;
  }
  return !text.empty();
}

}  // namespace clef::detail
