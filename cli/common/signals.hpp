// SIGINT/SIGTERM for the clef executable: the first asks to stop, the second cancels.
#pragma once

#include <atomic>

namespace clef::cli {

struct InterruptFlags {
  std::atomic<bool> stop{false};
  std::atomic<bool> cancel{false};
};

/// Installs the handlers (once) and returns the flags they set. Signal handlers can only reach
/// process-wide state, so this is the one global in clef.
InterruptFlags& install_interrupt_handlers();

/// The first signal's flag, for a read deep in a command that has no Context at hand (a
/// questions file on a FIFO): false until a handler installed by the above sets it.
const std::atomic<bool>* interrupted_flag() noexcept;

}  // namespace clef::cli
