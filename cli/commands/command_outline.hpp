// What the command line is, read off the CLI11 definitions themselves: each command, its flags,
// and what a flag's value is (a file, one of a few words, any text) — so completions generated
// from it cannot drift from --help.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace clef::cli {

struct FlagOutline {
  enum class Value { none, text, file, choice };
  std::vector<std::string> names;  ///< As typed: "-o", "--output".
  std::string help;                ///< The first line of its help, for a completion's hint.
  Value value = Value::none;
  std::vector<std::string> choices;  ///< Value::choice: the words it takes.
};

struct CommandOutline {
  std::string name;
  std::string help;
  std::vector<FlagOutline> flags;
  bool file_arguments = false;  ///< Its positional arguments are files (INPUT, DATA, …).
  std::vector<std::string> argument_choices;  ///< Or one of these words (cache's ACTION).
};

struct CliOutline {
  std::vector<FlagOutline> global_flags;
  std::vector<CommandOutline> commands;
};

/// The outline of `app` and its subcommands. A flag's choices come from its help when it starts
/// "a | b | c" (the way every enumerated flag of clef is described); a flag or argument whose
/// help names a FILE, a file or a DIR completes file names.
CliOutline outline_of(const CLI::App& app);

}  // namespace clef::cli
