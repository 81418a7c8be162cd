// The implementation of signals.hpp: SIGINT/SIGTERM for the clef executable.
#include "common/signals.hpp"

#include <csignal>

namespace clef::cli {
namespace {

InterruptFlags g_flags;

extern "C" void on_interrupt(int) {
  if (g_flags.stop.exchange(true)) g_flags.cancel.store(true);
}

}  // namespace

const std::atomic<bool>* interrupted_flag() noexcept {
  return &g_flags.stop;
}

InterruptFlags& install_interrupt_handlers() {
  struct sigaction action {};
  action.sa_handler = on_interrupt;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  std::signal(SIGPIPE, SIG_IGN);  // a closed pipe shows up as a write error instead
  std::signal(SIGXFSZ, SIG_IGN);  // so does a file-size limit (ulimit -f): write() fails, EFBIG
  return g_flags;
}

}  // namespace clef::cli
