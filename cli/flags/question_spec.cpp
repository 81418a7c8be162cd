// The implementation of question_spec.hpp: questions from the command line.
#include "flags/question_spec.hpp"

#include "common/files.hpp"

namespace clef::cli {
namespace {

std::vector<std::string> split_parts(const std::string& spec) {
  std::vector<std::string> parts(1);
  for (std::size_t i = 0; i < spec.size(); ++i) {
    if (spec[i] == '\\' && i + 1 < spec.size() && spec[i + 1] == '|') {
      parts.back() += '|';
      ++i;
    } else if (spec[i] == '|') {
      parts.emplace_back();
    } else {
      parts.back() += spec[i];
    }
  }
  for (auto& part : parts) {
    const auto first = part.find_first_not_of(" \t");
    const auto last = part.find_last_not_of(" \t");
    part = first == std::string::npos ? std::string() : part.substr(first, last - first + 1);
  }
  return parts;
}

/// `text` with each '|' escaped, so split_parts keeps it whole.
std::string escaped_pipes(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '|') out += '\\';
    out += c;
  }
  return out;
}

/// One '|' part after the instructions: an option (label=description), a yes/no meaning
/// (true=... or false=...) or a score level.
Status add_part(Question& question, const std::string& part, const std::string& flag) {
  const auto equals = part.find('=');
  std::string key = part.substr(0, equals);
  while (!key.empty() && key.back() == ' ') key.pop_back();
  std::optional<std::string> value;
  if (equals != std::string::npos) {
    std::string v = part.substr(equals + 1);
    const auto first = v.find_first_not_of(' ');
    value = first == std::string::npos ? std::string() : v.substr(first);
  }
  switch (question.type) {
    case QuestionType::choice:
      question.options.push_back({key, value});
      break;
    case QuestionType::yes_no:
      if (key == "true" && value) {
        question.true_means = value;
      } else if (key == "false" && value) {
        question.false_means = value;
      } else {
        return make_error(
            ErrorKind::invalid_input,
            "a yes/no question takes only 'true=...' and 'false=...', not \"" + part + "\"",
            flag + " " + question.name);
      }
      break;
    case QuestionType::score:
      question.levels.push_back(part);
      break;
    case QuestionType::box:
      break;  // one part only (escaped_pipes)
  }
  return {};
}

}  // namespace

Result<std::vector<Question>> read_questions_files(const std::vector<std::string>& paths,
                                                   std::istream& in) {
  std::vector<Question> questions;
  for (const auto& path : paths) {
    auto text = read_file(path, "the questions file", in);
    if (!text) return text.error();
    auto parsed = parse_questions(text.value());
    if (!parsed) {
      Error error = parsed.error();
      error.where = path + ": " + error.where;
      return error;
    }
    for (auto& question : parsed.value()) questions.push_back(std::move(question));
  }
  return questions;
}

Result<Question> parse_shorthand(QuestionType type, const std::string& spec) {
  const std::string flag = type == QuestionType::choice   ? "--choice"
                           : type == QuestionType::yes_no ? "--yes-no"
                           : type == QuestionType::score  ? "--score"
                                                          : "--box";
  const auto colon = spec.find(':');
  if (colon == std::string::npos) {
    return make_error(ErrorKind::invalid_input,
                      "expected 'NAME: instructions | ...', found no ':' in \"" + spec + "\"",
                      flag);
  }
  std::string name = spec.substr(0, colon);
  while (!name.empty() && name.back() == ' ') name.pop_back();
  // A box has instructions only: everything after the colon, a '|' included.
  std::vector<std::string> parts = type == QuestionType::box
                                       ? split_parts(escaped_pipes(spec.substr(colon + 1)))
                                       : split_parts(spec.substr(colon + 1));
  Question question;
  question.name = name;
  question.type = type;
  question.instructions = parts.front();
  for (std::size_t i = 1; i < parts.size(); ++i) {
    if (auto added = add_part(question, parts[i], flag); !added) return added.error();
  }
  if (auto status = validate(question); !status) {
    Error error = status.error();
    error.where = flag + " " + error.where;
    return error;
  }
  return question;
}

}  // namespace clef::cli
