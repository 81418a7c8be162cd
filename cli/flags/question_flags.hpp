// --questions FILE and the inline --choice / --yes-no / --score / --box flags, shared by ask and
// batch.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "clef/question.hpp"

namespace clef::cli {

struct QuestionFlags {
  std::vector<std::string> files;
  std::vector<std::string> choices;
  std::vector<std::string> yes_nos;
  std::vector<std::string> scores;
  std::vector<std::string> boxes;
  CLI::Option* choice_option = nullptr;
  CLI::Option* yes_no_option = nullptr;
  CLI::Option* score_option = nullptr;
  CLI::Option* box_option = nullptr;
};

void add_question_flags(CLI::App& command, QuestionFlags& flags);

/// The questions from the files first (in order), then the inline ones in command-line order.
Result<std::vector<Question>> collect_questions(const QuestionFlags& flags,
                                                const CLI::App& command);

}  // namespace clef::cli
