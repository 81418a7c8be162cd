#include "question_spec.hpp"

#include <fstream>

#include <nlohmann/json.hpp>
#include <sstream>
#include "clef/json.hpp"

namespace clef::cli {
namespace {

using Json = nlohmann::ordered_json;

Error spec_error(const std::string& source, const std::string& where, const std::string& message) {
  return make_error(ErrorKind::invalid_input, message, source + ": " + where);
}

Result<std::optional<std::string>> optional_text(const Json& value, const std::string& source,
                                                 const std::string& where) {
  if (value.is_null()) return std::optional<std::string>();
  if (!value.is_string()) {
    return spec_error(source, where,
                      std::string("must be a string or null, not ") + value.type_name() +
                          " (structured descriptions are not supported)");
  }
  return std::optional<std::string>(value.get<std::string>());
}

Result<Question> question_from_json(const std::string& name, const Json& q,
                                    const std::string& source) {
  const std::string at = "questions." + name;
  if (!q.is_object()) return spec_error(source, at, "a question must be an object");
  for (const auto& item : q.items()) {
    if (item.key() != "type" && item.key() != "instructions" && item.key() != "criteria") {
      return spec_error(source, at + "." + item.key(),
                        "unknown field (a question has type, instructions and criteria only)");
    }
  }
  if (!q.contains("type") || !q["type"].is_string()) {
    return spec_error(source, at + ".type", "missing: \"choice\", \"noul\" or \"score\"");
  }
  if (!q.contains("instructions") || !q["instructions"].is_string()) {
    return spec_error(source, at + ".instructions", "must be a string");
  }
  Question question;
  question.name = name;
  question.instructions = q["instructions"].get<std::string>();
  const std::string type = q["type"].get<std::string>();
  const Json criteria = q.contains("criteria") ? q["criteria"] : Json();
  if (type == "choice") {
    question.type = QuestionType::choice;
    if (!criteria.is_object()) {
      return spec_error(source, at + ".criteria", "a choice needs an object of label: description");
    }
    for (const auto& item : criteria.items()) {
      auto description = optional_text(item.value(), source, at + ".criteria." + item.key());
      if (!description) return description.error();
      question.options.push_back({item.key(), description.value()});
    }
  } else if (type == "noul") {
    question.type = QuestionType::noul;
    if (!criteria.is_null()) {
      if (!criteria.is_object()) {
        return spec_error(source, at + ".criteria",
                          "must be an object with \"true\" and/or \"false\"");
      }
      for (const auto& item : criteria.items()) {
        if (item.key() != "true" && item.key() != "false") {
          return spec_error(source, at + ".criteria." + item.key(),
                            "a noul question's criteria take only \"true\" and \"false\"");
        }
        if (!item.value().is_string()) {
          return spec_error(source, at + ".criteria." + item.key(), "must be a string");
        }
      }
      if (criteria.contains("true")) question.true_means = criteria["true"].get<std::string>();
      if (criteria.contains("false")) question.false_means = criteria["false"].get<std::string>();
    }
  } else if (type == "score") {
    question.type = QuestionType::score;
    if (!criteria.is_array()) {
      return spec_error(source, at + ".criteria", "a score needs an array of level descriptions");
    }
    for (std::size_t i = 0; i < criteria.size(); ++i) {
      if (!criteria[i].is_string()) {
        return spec_error(source, at + ".criteria[" + std::to_string(i) + "]", "must be a string");
      }
      question.levels.push_back(criteria[i].get<std::string>());
    }
  } else {
    return spec_error(source, at + ".type",
                      "unknown type \"" + type + "\" (choice, noul or score)");
  }
  if (auto status = validate(question); !status) {
    Error error = status.error();
    error.where = source + ": " + error.where;
    return error;
  }
  return question;
}

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

}  // namespace

Result<std::vector<Question>> parse_questions_json(const std::string& json_text,
                                                   const std::string& source) {
  auto parsed = parse_json(json_text, "the questions file");
  if (!parsed) {
    Error error = parsed.error();
    error.where = source + ": " + error.where;
    return error;
  }
  const Json root = std::move(parsed).value();
  if (!root.is_object()) {
    return spec_error(source, "$", "must be a JSON object of name: question");
  }
  std::vector<Question> questions;
  for (const auto& item : root.items()) {
    auto question = question_from_json(item.key(), item.value(), source);
    if (!question) return question.error();
    questions.push_back(std::move(question).value());
  }
  if (questions.empty()) return spec_error(source, "$", "holds no questions");
  return questions;
}

Result<std::vector<Question>> read_questions_file(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return make_error(ErrorKind::invalid_input, "cannot open the questions file", path);
  std::ostringstream text;
  text << file.rdbuf();
  return parse_questions_json(text.str(), path);
}

Result<Question> parse_shorthand(QuestionType type, const std::string& spec) {
  const std::string flag = type == QuestionType::choice ? "--choice"
                           : type == QuestionType::noul ? "--yes-no"
                                                        : "--score";
  const auto colon = spec.find(':');
  if (colon == std::string::npos) {
    return make_error(ErrorKind::invalid_input,
                      "expected 'NAME: instructions | ...', found no ':' in \"" + spec + "\"",
                      flag);
  }
  std::string name = spec.substr(0, colon);
  while (!name.empty() && name.back() == ' ') name.pop_back();
  std::vector<std::string> parts = split_parts(spec.substr(colon + 1));
  Question question;
  question.name = name;
  question.type = type;
  question.instructions = parts.front();
  for (std::size_t i = 1; i < parts.size(); ++i) {
    const std::string& part = parts[i];
    const auto equals = part.find('=');
    std::string key = part.substr(0, equals);
    while (!key.empty() && key.back() == ' ') key.pop_back();
    std::optional<std::string> value;
    if (equals != std::string::npos) {
      std::string v = part.substr(equals + 1);
      const auto first = v.find_first_not_of(' ');
      value = first == std::string::npos ? std::string() : v.substr(first);
    }
    switch (type) {
      case QuestionType::choice:
        question.options.push_back({key, value});
        break;
      case QuestionType::noul:
        if (key == "true" && value)
          question.true_means = value;
        else if (key == "false" && value)
          question.false_means = value;
        else {
          return make_error(
              ErrorKind::invalid_input,
              "a yes/no question takes only 'true=...' and 'false=...', not \"" + part + "\"",
              flag + " " + name);
        }
        break;
      case QuestionType::score:
        question.levels.push_back(part);
        break;
    }
  }
  if (auto status = validate(question); !status) {
    Error error = status.error();
    error.where = flag + " " + error.where;
    return error;
  }
  return question;
}

}  // namespace clef::cli
