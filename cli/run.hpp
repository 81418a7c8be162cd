// The clef command, as a function tests can call.
#pragma once

#include <atomic>
#include <iosfwd>
#include <string>
#include <vector>

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

/// "COMMAND --flag" for each option of clef's commands (and clef mock's) that takes more than
/// one value after the flag: none, so `--host URL tickets.jsonl` never takes the input as a
/// host. For the test that keeps it so.
std::vector<std::string> options_that_swallow_arguments();

/// Writes clef.1, clef-COMMAND.1 for each command and clef-mock.1 into `directory`, from the
/// definitions run() parses (clef_man_pages, at build time). `expected` names the pages the build
/// installs: a page more or less is an error, so a new command cannot go without its page.
/// Returns 0, or 1 having said why on `err`.
int write_man_pages(const std::string& directory, const std::vector<std::string>& expected,
                    std::ostream& err);

}  // namespace clef::cli
