// Runs the clef command in-process (clef::cli::run) or as a child process, capturing output.
#pragma once

#include <string>
#include <vector>

namespace clef::testing {

struct CliResult {
  int code = -1;
  std::string out;
  std::string err;
};

/// clef::cli::run with `args` (without "clef"); `stdin_text` is piped when `piped`.
CliResult run_clef(const std::vector<std::string>& args, const std::string& stdin_text = {},
                   bool piped = false);

/// A path under the test temp dir holding `content`.
std::string write_temp_file(const std::string& name, const std::string& content);
std::string read_file(const std::string& path);

}  // namespace clef::testing
