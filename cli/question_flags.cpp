#include "question_flags.hpp"

#include "question_spec.hpp"

namespace clef::cli {

void add_question_flags(CLI::App& command, QuestionFlags& flags) {
  command.add_option("-q,--questions", flags.file,
                     "JSON file holding the questions object in the wire format");
  flags.choice_option =
      command.add_option("--choice", flags.choices,
                         "A choice question: 'NAME: instructions | label=description | label ...'");
  flags.yes_no_option = command.add_option(
      "--yes-no", flags.yes_nos,
      "A yes/no/unknown question: 'NAME: instructions [| true=... | false=...]'");
  flags.score_option =
      command.add_option("--score", flags.scores,
                         "A score question: 'NAME: instructions | lowest level | ... | highest'");
  for (CLI::Option* option : {flags.choice_option, flags.yes_no_option, flags.score_option}) {
    option->allow_extra_args(false)->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  }
}

Result<std::vector<Question>> collect_questions(const QuestionFlags& flags,
                                                const CLI::App& command) {
  std::vector<Question> questions;
  if (!flags.file.empty()) {
    auto from_file = read_questions_file(flags.file);
    if (!from_file) return from_file.error();
    questions = std::move(from_file).value();
  }
  std::size_t next_choice = 0, next_yes_no = 0, next_score = 0;
  for (const CLI::Option* option : command.parse_order()) {
    Result<Question> question = make_error(ErrorKind::invalid_input, "unreachable");
    if (option == flags.choice_option && next_choice < flags.choices.size()) {
      question = parse_shorthand(QuestionType::choice, flags.choices[next_choice++]);
    } else if (option == flags.yes_no_option && next_yes_no < flags.yes_nos.size()) {
      question = parse_shorthand(QuestionType::noul, flags.yes_nos[next_yes_no++]);
    } else if (option == flags.score_option && next_score < flags.scores.size()) {
      question = parse_shorthand(QuestionType::score, flags.scores[next_score++]);
    } else {
      continue;
    }
    if (!question) return question.error();
    questions.push_back(std::move(question).value());
  }
  if (questions.empty()) {
    return make_error(ErrorKind::invalid_input,
                      "no questions: give --questions FILE or --choice / --yes-no / --score",
                      "questions");
  }
  if (auto status = validate(questions); !status) return status.error();
  return questions;
}

}  // namespace clef::cli
