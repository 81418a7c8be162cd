// The one exit-code table of the clef command (docs/ask.md: "Exit codes").
#pragma once

#include <vector>

#include "clef/error.hpp"

namespace clef::cli {

enum class ExitCode : int {
  ok = 0,
  gate_failed = 1,      ///< --expect or --min-confidence did not hold.
  usage = 2,            ///< Bad command line, question file, state, image or other input.
  authentication = 3,   ///< Missing or refused credentials, or a used-up quota (Workers AI).
  server = 4,           ///< HTTP errors after retries, model missing, invalid responses.
  transport = 5,        ///< Connection refused, timeout, TLS.
  partial_failure = 6,  ///< clef batch and eval: some items failed (their errors are said).
  output = 7,           ///< The output cannot be written: disk full, closed pipe, file in use.
  abstained = 8,        ///< clef ask --policy: an answer is below its threshold (ask a person).
  not_recorded = 9,     ///< --replay: the cassette has no recording of a request.
  incomplete = 10,      ///< clef merge: items or whole shards have no result.
  interrupted = 130,    ///< SIGINT / SIGTERM.
};

struct ExitCodeMeaning {
  ExitCode code;
  const char* meaning;
};

/// Every exit code and what it means, lowest first (the man pages' EXIT STATUS; docs/ask.md's
/// table says the same).
const std::vector<ExitCodeMeaning>& exit_code_meanings();

/// The exit code for an error of `kind`.
ExitCode exit_code_for(ErrorKind kind) noexcept;

inline int as_int(ExitCode code) noexcept {
  return static_cast<int>(code);
}

}  // namespace clef::cli
