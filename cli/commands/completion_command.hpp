// clef completion bash|zsh|fish: tab completion for clef's commands, flags and their values,
// generated from the same CLI11 definitions --help prints.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "common/context.hpp"

namespace clef::cli {

CLI::App* add_completion_command(CLI::App& app, std::string& shell);

/// Prints the completion script for `shell` (bash, zsh or fish) of `app`'s command line.
int run_completion(const CLI::App& app, const std::string& shell, const Context& context);

}  // namespace clef::cli
