// `clef batch`: route a whole file of states, resumable, nothing lost.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "common/context.hpp"
#include "flags/connection.hpp"
#include "flags/question_flags.hpp"

namespace clef::cli {

struct BatchFlags {
  std::string input;
  std::string output = "-";
  std::string input_format;  ///< Empty: from the file name.
  std::string id_field = "id";
  std::string state_field = "state";
  QuestionFlags questions;
  std::size_t concurrency = 4;
  double rate = 0;
  double throttle_budget_seconds = 600;  ///< How long one item may be throttled (429/503).
  bool ordered = false;
  bool resume = false;
  bool force_resume = false;
  bool overwrite = false;
  bool dedupe = false;
  std::string keep_alive;
  std::string output_format = "jsonl";     ///< jsonl | csv | tsv
  std::vector<std::string> state_columns;  ///< CSV/TSV: the state as an object of these columns.
  std::string policy;  ///< --policy FILE: thresholds below which an answer abstains.
  ConnectionFlags connection;
};

CLI::App* add_batch_command(CLI::App& app, BatchFlags& flags);
/// The flags of how a file is read and sent (formats, fields, questions, concurrency, rate,
/// dedupe, connection), shared with `clef eval`.
void add_batch_run_flags(CLI::App& command, BatchFlags& flags);
int run_batch_command(const BatchFlags& flags, const CLI::App& command, const Context& context);

}  // namespace clef::cli
