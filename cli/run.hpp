// The clef command, as a function tests can call.
#pragma once

#include <atomic>
#include <iosfwd>

namespace clef::cli {

struct RunOptions {
  std::istream* in = nullptr;  ///< Default: std::cin.
  bool stdin_is_piped = false;
  bool stdout_is_tty = false;
  bool stderr_is_tty = false;
  const std::atomic<bool>* stop = nullptr;
  const std::atomic<bool>* cancel = nullptr;
};

/// Parses argv and runs the command; returns the exit code (see exit_codes.hpp).
int run(int argc, char** argv, std::ostream& out, std::ostream& err,
        const RunOptions& options = {});

}  // namespace clef::cli
