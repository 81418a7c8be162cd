// The implementation of clef/question.hpp: the three System One question types.
#include "clef/question.hpp"

#include <algorithm>
#include <set>

#include "model/question_wire.hpp"
#include "util/json_text.hpp"

namespace clef {
namespace {

bool is_name_char(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.' || c == '-';
}

bool is_blank(const std::string& text) {
  return std::all_of(text.begin(), text.end(),
                     [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; });
}

Error question_error(const Question& question, const std::string& rule) {
  return make_error(ErrorKind::invalid_input, rule, "questions." + question.name);
}

Status validate_choice(const Question& q) {
  if (q.options.size() < QuestionLimits::min_options) {
    return question_error(
        q, "a choice question needs at least 2 options, got " + std::to_string(q.options.size()));
  }
  if (q.options.size() > QuestionLimits::max_options) {
    return question_error(
        q, "a choice question takes at most 255 options, got " + std::to_string(q.options.size()));
  }
  std::set<std::string> seen;
  for (const auto& option : q.options) {
    if (option.label.empty()) return question_error(q, "an option label is empty");
    if (!seen.insert(option.label).second) {
      return question_error(q, "option \"" + option.label + "\" appears twice");
    }
  }
  if (q.true_means || q.false_means || !q.levels.empty() || !q.level_descriptions.empty()) {
    return question_error(q, "a choice question takes options only (no true/false or levels)");
  }
  return {};
}

Status validate_yes_no(const Question& q) {
  if (!q.options.empty() || !q.levels.empty() || !q.level_descriptions.empty()) {
    return question_error(q, "a noul question takes only true/false descriptions");
  }
  return {};
}

Status validate_score(const Question& q) {
  if (q.levels.size() < QuestionLimits::min_levels ||
      q.levels.size() > QuestionLimits::max_levels) {
    return question_error(
        q, "a score question needs 2 to 10 levels, got " + std::to_string(q.levels.size()));
  }
  for (std::size_t i = 0; i < q.levels.size(); ++i) {
    if (is_blank(q.levels[i])) {
      return question_error(q, "level " + std::to_string(i) + " has no description");
    }
  }
  if (!q.level_descriptions.empty() && q.level_descriptions.size() != q.levels.size()) {
    return question_error(q, "level_descriptions has " +
                                 std::to_string(q.level_descriptions.size()) + " entries for " +
                                 std::to_string(q.levels.size()) + " levels");
  }
  for (std::size_t i = 0; i < q.level_descriptions.size(); ++i) {
    if (q.level_descriptions[i] && q.level_descriptions[i]->blank()) {
      return question_error(q, "level " + std::to_string(i) + " has an empty description");
    }
  }
  if (!q.options.empty() || q.true_means || q.false_means) {
    return question_error(q, "a score question takes levels only");
  }
  return {};
}

Status validate_box(const Question& q) {
  if (!q.options.empty() || q.true_means || q.false_means || !q.levels.empty() ||
      !q.level_descriptions.empty()) {
    return question_error(q, "a box question takes instructions only (no criteria)");
  }
  return {};
}

}  // namespace

Result<Guidance> Guidance::structured(std::string_view json_text) {
  auto value = clef::parse_json(json_text, "structured guidance");
  if (!value) return value.error();
  if (!value->is_object() && !value->is_array()) {
    return make_error(ErrorKind::invalid_input,
                      std::string("structured guidance must be a JSON object or array, not ") +
                          value->type_name(),
                      "guidance");
  }
  Guidance guidance;
  guidance.m_text = clef::dump_json(value.value());
  guidance.m_structured = true;
  return guidance;
}

bool Guidance::blank() const noexcept {
  if (m_structured) return m_text == "{}" || m_text == "[]";
  return is_blank(m_text);
}

const char* to_string(QuestionType type) noexcept {
  switch (type) {
    case QuestionType::choice:
      return "choice";
    case QuestionType::yes_no:
      return "noul";
    case QuestionType::score:
      return "score";
    case QuestionType::box:
      return "box";
  }
  return "unknown";
}

Question Question::choice(std::string name, Guidance instructions,
                          std::vector<ChoiceOption> options) {
  Question q;
  q.name = std::move(name);
  q.type = QuestionType::choice;
  q.instructions = std::move(instructions);
  q.options = std::move(options);
  return q;
}

Question Question::yes_no(std::string name, Guidance instructions,
                          std::optional<std::string> true_means,
                          std::optional<std::string> false_means) {
  Question q;
  q.name = std::move(name);
  q.type = QuestionType::yes_no;
  q.instructions = std::move(instructions);
  q.true_means = std::move(true_means);
  q.false_means = std::move(false_means);
  return q;
}

Question Question::score(std::string name, Guidance instructions, std::vector<std::string> levels) {
  Question q;
  q.name = std::move(name);
  q.type = QuestionType::score;
  q.instructions = std::move(instructions);
  q.levels = std::move(levels);
  return q;
}

Question Question::box(std::string name, Guidance instructions) {
  Question q;
  q.name = std::move(name);
  q.type = QuestionType::box;
  q.instructions = std::move(instructions);
  return q;
}

Status validate(const Question& q) {
  if (q.name.empty() || q.name.size() > QuestionLimits::max_name_length ||
      !std::all_of(q.name.begin(), q.name.end(), is_name_char)) {
    return make_error(
        ErrorKind::invalid_input,
        "question name \"" + q.name + "\" must be 1-100 characters of A-Z, a-z, 0-9, '_', '.', '-'",
        "questions." + q.name);
  }
  // Several servers answer 400/422 to empty instructions; catch it here with a better message.
  if (q.instructions.blank()) return question_error(q, "instructions are empty");
  switch (q.type) {
    case QuestionType::choice:
      return validate_choice(q);
    case QuestionType::yes_no:
      return validate_yes_no(q);
    case QuestionType::score:
      return validate_score(q);
    case QuestionType::box:
      return validate_box(q);
  }
  return question_error(q, "unknown question type");
}

namespace detail {

Status check_question_count(std::size_t count) {
  if (count == 0) {
    return make_error(ErrorKind::invalid_input, "a request needs at least one question",
                      "questions");
  }
  if (count > QuestionLimits::max_questions) {
    return make_error(ErrorKind::invalid_input,
                      "a request takes at most 64 questions, got " + std::to_string(count),
                      "questions");
  }
  return {};
}

}  // namespace detail

Status validate(const std::vector<Question>& questions) {
  if (auto counted = detail::check_question_count(questions.size()); !counted) return counted;
  std::set<std::string> names;
  for (const auto& q : questions) {
    if (auto status = validate(q); !status) return status;
    if (!names.insert(q.name).second) {
      return question_error(q, "question name \"" + q.name + "\" is used twice");
    }
  }
  return {};
}

}  // namespace clef
