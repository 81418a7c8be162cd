// The implementation of question_flags.hpp: --questions FILE and the inline --choice / --yes-no /
// --score / --box flags, shared by ask and batch.
#include "flags/question_flags.hpp"

#include <iostream>

#include "common/flag_rules.hpp"
#include "flags/question_spec.hpp"

namespace clef::cli {

void add_question_flags(CLI::App& command, QuestionFlags& flags) {
  one_value_each(command.add_option(
      "-q,--questions", flags.files,
      "JSON file holding a questions object in the wire format (repeat to merge files)"));
  flags.choice_option =
      command.add_option("--choice", flags.choices,
                         "A choice question: 'NAME: instructions | label=description | label ...'");
  flags.yes_no_option = command.add_option(
      "--yes-no", flags.yes_nos,
      "A yes/no/unknown question: 'NAME: instructions [| true=... | false=...]'");
  flags.score_option =
      command.add_option("--score", flags.scores,
                         "A score question: 'NAME: instructions | lowest level | ... | highest'");
  flags.box_option = command.add_option(
      "--box", flags.boxes,
      "A box question, where one thing is in the image (TypeSafe's Jev 1.14): 'NAME: "
      "instructions'");
  for (CLI::Option* option :
       {flags.choice_option, flags.yes_no_option, flags.score_option, flags.box_option}) {
    one_value_each(option);
  }
}

Result<std::vector<Question>> collect_questions(const QuestionFlags& flags,
                                                const CLI::App& command) {
  std::vector<Question> questions;
  auto from_files = read_questions_files(flags.files, std::cin);
  if (!from_files) return from_files.error();
  questions = std::move(from_files).value();
  std::size_t next_choice = 0, next_yes_no = 0, next_score = 0, next_box = 0;
  for (const CLI::Option* option : command.parse_order()) {
    Result<Question> question = make_error(ErrorKind::invalid_input, "unreachable");
    if (option == flags.choice_option && next_choice < flags.choices.size()) {
      question = parse_shorthand(QuestionType::choice, flags.choices[next_choice++]);
    } else if (option == flags.yes_no_option && next_yes_no < flags.yes_nos.size()) {
      question = parse_shorthand(QuestionType::yes_no, flags.yes_nos[next_yes_no++]);
    } else if (option == flags.score_option && next_score < flags.scores.size()) {
      question = parse_shorthand(QuestionType::score, flags.scores[next_score++]);
    } else if (option == flags.box_option && next_box < flags.boxes.size()) {
      question = parse_shorthand(QuestionType::box, flags.boxes[next_box++]);
    } else {
      continue;
    }
    if (!question) return question.error();
    questions.push_back(std::move(question).value());
  }
  if (questions.empty()) {
    return make_error(
        ErrorKind::invalid_input,
        "no questions: give --questions FILE or --choice / --yes-no / --score / --box",
        "questions");
  }
  if (auto status = validate(questions); !status) return status.error();
  return questions;
}

}  // namespace clef::cli
