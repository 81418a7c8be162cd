// What a command needs from the process: streams, terminals, and the interrupt flags.
#pragma once

#include <atomic>
#include <istream>
#include <ostream>
#include <string>
#include <string_view>

namespace clef::cli {

struct Context {
  std::ostream& out;
  std::ostream& err;
  std::istream& in;
  bool stdin_is_piped = false;
  bool stdout_is_tty = false;
  bool stderr_is_tty = false;
  bool color = false;  ///< stdout is a terminal and NO_COLOR is unset or empty.
  /// First SIGINT/SIGTERM: start nothing new. Second: abort transfers in flight.
  const std::atomic<bool>* stop = nullptr;
  const std::atomic<bool>* cancel = nullptr;
};

/// `text` with control characters (ANSI escapes, carriage returns...) but newline and tab
/// replaced by '?': server text goes through it before it reaches a terminal.
std::string terminal_safe(std::string_view text);

}  // namespace clef::cli
