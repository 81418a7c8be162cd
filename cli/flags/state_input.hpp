// Where `clef ask` gets its state: an argument, a file, stdin, or inline JSON.
#pragma once

#include <istream>
#include <optional>
#include <string>

#include "clef/state.hpp"

namespace clef::cli {

struct StateFlags {
  std::optional<std::string> text;  ///< The positional STATE.
  std::string file;                 ///< --state-file FILE, "-" = stdin.
  std::string json;                 ///< --state-json JSON or @FILE.
};

/// Exactly one source; stdin when none is given and `stdin_is_piped`. A file's single
/// trailing newline is dropped, as `$(cat FILE)` would.
Result<State> read_state(const StateFlags& flags, std::istream& in, bool stdin_is_piped);

}  // namespace clef::cli
