// `clef eval`: how well models answer your own labelled items, with gates for CI.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "batch/batch_command.hpp"
#include "common/context.hpp"

namespace clef::cli {

struct EvalFlags {
  BatchFlags run;                   ///< DATA, how it is read, the questions and the connection.
  std::vector<std::string> labels;  ///< QUESTION=FIELD
  std::vector<std::string> models;  ///< Empty: the one default model.
  std::string answers;              ///< Keep the raw results here (resumed on the next call).
  std::vector<std::string> from_results;  ///< Score these `clef batch` outputs, sending nothing.
  std::string report_json;
  std::string report_md;
  std::string report_html;
  bool fit_thresholds = false;
  double target_precision = 0.95;
  std::string policy_out;
  std::vector<std::string> requirements;
  std::string baseline;
  std::vector<std::string> tolerances;
  std::size_t permute = 1;         ///< Orders of each choice's and score's options (1: as asked).
  std::uint64_t permute_seed = 1;  ///< Draws the orders past the rotations.
  std::size_t repeat = 1;          ///< Requests per item (1: no repeat).
};

CLI::App* add_eval_command(CLI::App& app, EvalFlags& flags);
int run_eval(EvalFlags flags, const CLI::App& command, const Context& context);

}  // namespace clef::cli
