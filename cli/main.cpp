// The clef executable: everything happens in clef::cli::run, which the tests call directly.
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>
#include <string>

#include "common/interruptible_stderr.hpp"
#include "common/signals.hpp"
#include "run.hpp"

namespace {

/// `clef mock …` is clef-mock, installed beside this executable: the process becomes it, so its
/// URL line, signals and exit code are the mock's own.
int exec_mock(char** argv) {
  char self[4096];
  const ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
  std::string path = "clef-mock";
  if (n > 0) {
    self[n] = '\0';
    const std::string dir(self);
    path = dir.substr(0, dir.find_last_of('/') + 1) + "clef-mock";
  }
  argv[1] = const_cast<char*>("clef mock");
  ::execv(path.c_str(), argv + 1);
  ::execvp("clef-mock", argv + 1);  // not beside clef: try PATH
  std::cerr << "clef: error: cannot run clef-mock (" << path << "): " << std::strerror(errno)
            << "\nclef: it is built with clef when libcpp-httplib-dev is installed\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 2 && std::string(argv[1]) == "mock") return exec_mock(argv);
  if (argc == 3 && std::string(argv[1]) == "help" && std::string(argv[2]) == "mock") {
    char* help_argv[] = {argv[0], const_cast<char*>("mock"), const_cast<char*>("--help"), nullptr};
    return exec_mock(help_argv);
  }
  std::ios::sync_with_stdio(false);
  auto& interrupts = clef::cli::install_interrupt_handlers();
  clef::cli::RunOptions options;
  options.stdin_is_piped = isatty(STDIN_FILENO) == 0;
  options.stdout_is_tty = isatty(STDOUT_FILENO) == 1;
  options.stderr_is_tty = isatty(STDERR_FILENO) == 1;
  options.stop = &interrupts.stop;
  options.cancel = &interrupts.cancel;
  // stderr waits for a reader that stopped reading only until a signal: then -v, progress and
  // the summary drop what does not fit, and the run ends as the signal asked.
  clef::cli::InterruptibleStderr stderr_buffer(STDERR_FILENO, &interrupts.stop);
  std::ostream err(&stderr_buffer);
  const int code = clef::cli::run(argc, argv, std::cout, err, options);
  std::cout.flush();
  return code;
}
