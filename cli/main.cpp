// The clef executable: everything happens in clef::cli::run, which the tests call directly.
#include <unistd.h>

#include <iostream>

#include "run.hpp"
#include "signals.hpp"

int main(int argc, char** argv) {
  std::ios::sync_with_stdio(false);
  auto& interrupts = clef::cli::install_interrupt_handlers();
  clef::cli::RunOptions options;
  options.stdin_is_piped = isatty(STDIN_FILENO) == 0;
  options.stdout_is_tty = isatty(STDOUT_FILENO) == 1;
  options.stderr_is_tty = isatty(STDERR_FILENO) == 1;
  options.stop = &interrupts.stop;
  options.cancel = &interrupts.cancel;
  const int code = clef::cli::run(argc, argv, std::cout, std::cerr, options);
  std::cout.flush();
  return code;
}
