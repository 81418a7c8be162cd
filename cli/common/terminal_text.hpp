// Text meant for a terminal: what may reach it from outside, its colours, and column padding.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace clef::cli {

/// `text` with control characters (ANSI escapes, carriage returns, C1 controls, bidirectional
/// overrides...) but newline and tab replaced by '?': text from a server or a file goes through
/// it before it reaches a terminal.
std::string terminal_safe(std::string_view text);

/// terminal_safe, newline and tab replaced too: for one value on one line (a model's name, a
/// version, an option's label), which must not start a line of its own.
std::string terminal_safe_line(std::string_view text);

/// `text` followed by spaces up to `width` characters (longer text is left as it is).
std::string padded(const std::string& text, std::size_t width);

/// `words` with `separator` between each two ("a, b, c").
std::string joined(const std::vector<std::string>& words, std::string_view separator);

/// The few ANSI styles clef uses, written only when Context::color says so.
namespace ansi {
inline constexpr const char* bold = "\x1b[1m";
inline constexpr const char* dim = "\x1b[2m";
inline constexpr const char* green = "\x1b[32m";
inline constexpr const char* cyan = "\x1b[36m";
inline constexpr const char* reset = "\x1b[0m";
}  // namespace ansi

}  // namespace clef::cli
