// `clef diff`: two `clef batch` outputs over the same items compared with no labels — which
// answers changed after a model update, or between two models.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "common/context.hpp"
#include "flags/question_flags.hpp"

namespace clef::cli {

struct DiffFlags {
  std::string before;  ///< Run A's output.
  std::string after;   ///< Run B's output.
  QuestionFlags questions;
  std::vector<std::string> requirements;
  std::string report_json;
  std::size_t show = 10;  ///< Flips listed per question on stdout.
};

CLI::App* add_diff_command(CLI::App& app, DiffFlags& flags);
int run_diff(const DiffFlags& flags, const CLI::App& command, const Context& context);

}  // namespace clef::cli
