// "Did you mean": the command or flag a mistyped one was most likely meant to be.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace clef::cli {

/// The command a mistyped name was most likely meant to be (within two edits), or "".
std::string closest_command(const CLI::App& app, const std::string& typed);

/// " (did you mean `--host`?)" for a mistyped flag: the command's own flag (or a global one)
/// within two edits of one the parser did not expect; "" when none is that close.
std::string suggestion(const CLI::App& app, const CLI::ParseError& error);

}  // namespace clef::cli
