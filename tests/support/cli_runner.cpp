// The implementation of cli_runner.hpp: runs the clef command in-process (clef::cli::run) or as a
// child process, capturing output.
#include "cli_runner.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "run.hpp"

namespace clef::testing {

namespace {

CliResult run_in_process(const std::vector<std::string>& args, const std::string& stdin_text,
                         bool piped, bool stdout_is_tty) {
  std::vector<std::string> storage = {"clef"};
  storage.insert(storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& arg : storage) argv.push_back(arg.data());
  std::istringstream in(stdin_text);
  std::ostringstream out, err;
  clef::cli::RunOptions options;
  options.in = &in;
  options.stdin_is_piped = piped;
  options.stdout_is_tty = stdout_is_tty;
  CliResult result;
  result.code = clef::cli::run(static_cast<int>(argv.size()), argv.data(), out, err, options);
  result.out = out.str();
  result.err = err.str();
  return result;
}

}  // namespace

CliResult run_clef(const std::vector<std::string>& args, const std::string& stdin_text,
                   bool piped) {
  return run_in_process(args, stdin_text, piped, false);
}

CliResult run_clef_on_terminal(const std::vector<std::string>& args) {
  return run_in_process(args, {}, false, true);
}

std::string write_temp_file(const std::string& name, const std::string& content) {
  const std::string path = ::testing::TempDir() + name;
  std::ofstream(path, std::ios::binary) << content;
  return path;
}

std::string read_file(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

std::string jsonl_tickets(int n, int start) {
  std::string text;
  for (int i = start; i < start + n; ++i) {
    text += nlohmann::ordered_json({{"id", "T" + std::to_string(i)},
                                    {"state", {{"ticket", "ticket number " + std::to_string(i)}}}})
                .dump() +
            "\n";
  }
  return text;
}

std::vector<nlohmann::ordered_json> lines_of(const std::string& text) {
  std::vector<nlohmann::ordered_json> lines;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) lines.push_back(nlohmann::ordered_json::parse(line));
  return lines;
}

std::map<std::string, nlohmann::ordered_json> lines_by_id(const std::string& path) {
  std::map<std::string, nlohmann::ordered_json> out;
  for (auto& line : lines_of(read_file(path))) out[line["id"].get<std::string>()] = line;
  return out;
}

std::vector<std::string> batch_args(const std::string& base_url, const std::string& input,
                                    const std::string& output, std::vector<std::string> extra) {
  std::vector<std::string> args = {"batch",     input,    "-o",       output,
                                   "--host",    base_url, "--yes-no", "urgent: Is it urgent?",
                                   "--retries", "3"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

std::string fresh_path(const std::string& name) {
  const std::string path = ::testing::TempDir() + name;
  // A directory too, whole: a cache directory left by an earlier run of the suite answered a
  // test's requests whenever its server drew the same port again.
  std::error_code ignored;
  std::filesystem::remove_all(path, ignored);
  std::remove((path + ".clef-run.json").c_str());
  return path;
}

}  // namespace clef::testing
