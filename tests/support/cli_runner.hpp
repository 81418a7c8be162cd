// Runs the clef command in-process (clef::cli::run) or as a child process, capturing output.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
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

/// run_clef as if stdout were a terminal (colour, --color auto).
CliResult run_clef_on_terminal(const std::vector<std::string>& args);

/// A path under the test temp dir holding `content`.
std::string write_temp_file(const std::string& name, const std::string& content);
std::string read_file(const std::string& path);

/// `n` JSONL tickets {"id": "T<i>", "state": {"ticket": "ticket number <i>"}}, from `start`.
std::string jsonl_tickets(int n, int start = 0);
/// Each line of `text` parsed as JSON (the test fails on a line that does not parse).
std::vector<nlohmann::ordered_json> lines_of(const std::string& text);
/// The JSON lines of the file at `path` by their string "id" (the last line of an id wins).
std::map<std::string, nlohmann::ordered_json> lines_by_id(const std::string& path);
/// `clef batch INPUT -o OUTPUT --host BASE_URL --yes-no 'urgent: …' --retries 3` plus `extra`.
std::vector<std::string> batch_args(const std::string& base_url, const std::string& input,
                                    const std::string& output, std::vector<std::string> extra = {});
/// A path under the test temp dir with nothing there (a directory is removed whole), and no run
/// record beside it.
std::string fresh_path(const std::string& name);

}  // namespace clef::testing
