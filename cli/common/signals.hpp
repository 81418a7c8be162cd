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

}  // namespace clef::cli
