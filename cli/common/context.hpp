// What a command needs from the process: streams, whether they are terminals, the interrupt flags.
#pragma once

#include <atomic>
#include <istream>
#include <ostream>

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

/// `process` for a command with nothing to finish gracefully (one request: ask, models,
/// doctor): its first SIGINT or SIGTERM cancels what is in flight.
inline Context cancelled_at_first_signal(const Context& process) {
  Context context = process;
  context.cancel = process.stop;
  return context;
}

}  // namespace clef::cli
