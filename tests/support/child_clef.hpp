// Runs the clef executable as a child process with a deadline: for behaviour that must not hang
// or crash (a FIFO in the cache, a recorded Retry-After), where an in-process run could block
// the test binary or take it down.
#pragma once

#include <sys/types.h>

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
  long max_rss_kb = 0;  ///< The child's peak resident memory (VmHWM, polled while it ran).
};

/// Starts `clef ARGS…` with `environment` added to this process's: stdin from /dev/null, stdout
/// and stderr to these files ("" = /dev/null; stdout may be /dev/full). -1 when it cannot.
pid_t spawn_clef(const std::vector<std::string>& args, const std::string& stdout_path = {},
                 const std::string& stderr_path = {},
                 const std::vector<std::pair<std::string, std::string>>& environment = {});

/// Waits for `child` until `deadline` has passed, then kills it (finished = false).
ChildResult wait_for_child(pid_t child, std::chrono::milliseconds deadline);

/// The child's exit code, 128 + the signal when one killed it; a child still running after
/// `deadline` is killed and the test fails, saying so (-1).
int wait_for_exit(pid_t child, std::chrono::milliseconds deadline = std::chrono::seconds(60));

/// `clef ARGS…` with `environment` added to this process's, killed if it runs past `deadline`.
ChildResult run_clef_child(
    const std::vector<std::string>& args, std::chrono::milliseconds deadline,
    const std::vector<std::pair<std::string, std::string>>& environment = {});

}  // namespace clef::testing
