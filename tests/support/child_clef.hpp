// Runs the clef executable as a child process with a deadline: for behaviour that must not hang
// or crash (a FIFO in the cache, a recorded Retry-After), where an in-process run could block
// the test binary or take it down.
#pragma once

#include <chrono>
#include <string>
#include <utility>
#include <vector>

namespace clef::testing {

struct ChildResult {
  bool finished = false;  ///< False: still running at the deadline, and killed.
  int code = -1;          ///< The exit status, or 128 + the signal that ended it.
  std::string out;
  std::string err;
  std::chrono::milliseconds elapsed{0};
  long max_rss_kb = 0;  ///< The child's peak resident memory.
};

/// `clef ARGS…` with `environment` added to this process's, killed if it runs past `deadline`.
ChildResult run_clef_child(
    const std::vector<std::string>& args, std::chrono::milliseconds deadline,
    const std::vector<std::pair<std::string, std::string>>& environment = {});

}  // namespace clef::testing
