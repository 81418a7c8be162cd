// `clef ask`: one decision from the shell.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/context.hpp"
#include "flags/connection.hpp"
#include "flags/question_flags.hpp"
#include "flags/request_builder.hpp"
#include "flags/state_input.hpp"

namespace clef::cli {

struct AskFlags {
  StateFlags state;
  QuestionFlags questions;
  AttachmentPaths attachments;  ///< --image, --audio, --video
  std::string keep_alive;
  bool json = false;
  std::string format;  ///< human | json | jsonl | tsv | values
  bool dry_run = false;
  bool print_curl = false;
  std::vector<std::string> expects;  ///< NAME=LABEL
  std::optional<double> min_confidence;
  std::string policy;  ///< --policy FILE: thresholds below which an answer abstains.
  ConnectionFlags connection;
};

CLI::App* add_ask_command(CLI::App& app, AskFlags& flags);
int run_ask(const AskFlags& flags, const CLI::App& command, const Context& context);

}  // namespace clef::cli
