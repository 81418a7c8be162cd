// `clef merge`: the outputs of a sharded `clef batch` (--shard K/N) made one, in input order,
// after proving every input item is there exactly once from runs of the same model, questions
// and input.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "common/context.hpp"

namespace clef::cli {

struct MergeFlags {
  std::vector<std::string> shards;  ///< The shards' output files.
  std::string output;               ///< -o OUT ("-" = stdout).
  std::string input;                ///< --input IN; empty: the input the run records name.
  bool overwrite = false;
};

CLI::App* add_merge_command(CLI::App& app, MergeFlags& flags);
int run_merge(const MergeFlags& flags, const Context& context);

}  // namespace clef::cli
