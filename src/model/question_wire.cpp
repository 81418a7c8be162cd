// The implementation of question_wire.hpp: questions to and from their wire form, the `questions`
// object of a request.
#include "model/question_wire.hpp"

#include <optional>
#include <set>

#include "clef/digest.hpp"
#include "util/json_text.hpp"

namespace clef::detail {
namespace {

// ---- writing ----------------------------------------------------------------------------------

Status append_guidance(std::string& out, const Guidance& guidance, const std::string& where) {
  // Structured guidance is already compact, valid JSON (Guidance::structured made it so).
  if (guidance.is_structured()) {
    out += guidance.text();
    return {};
  }
  return append_json_string(out, guidance.text(), where);
}

Status append_choice_criteria(std::string& out, const Question& q, const std::string& where) {
  out += ",\"criteria\":{";
  for (std::size_t i = 0; i < q.options.size(); ++i) {
    const auto& option = q.options[i];
    if (i) out += ',';
    // A label that is not UTF-8 cannot be shown: it is named by its place.
    if (auto s = append_json_string(
            out, option.label, where + ".criteria, option " + std::to_string(i + 1) + "'s label");
        !s)
      return s;
    out += ':';
    if (!option.description) {
      out += "null";
    } else if (auto s =
                   append_guidance(out, *option.description, where + ".criteria." + option.label);
               !s) {
      return s;
    }
  }
  out += '}';
  return {};
}

Status append_yes_no_criteria(std::string& out, const Question& q, const std::string& where) {
  // Ollama refuses any criteria key but "true" and "false"; send only what was given.
  if (!q.true_means && !q.false_means) return {};
  out += ",\"criteria\":{";
  if (q.true_means) {
    out += "\"true\":";
    if (auto s = append_json_string(out, *q.true_means, where + ".criteria.true"); !s) return s;
  }
  if (q.false_means) {
    if (q.true_means) out += ',';
    out += "\"false\":";
    if (auto s = append_json_string(out, *q.false_means, where + ".criteria.false"); !s) return s;
  }
  out += '}';
  return {};
}

Status append_score_criteria(std::string& out, const Question& q, const std::string& where) {
  out += ",\"criteria\":[";
  for (std::size_t i = 0; i < q.levels.size(); ++i) {
    if (i) out += ',';
    const std::string at = where + ".criteria[" + std::to_string(i) + "]";
    const bool described = i < q.level_descriptions.size() && q.level_descriptions[i];
    if (auto s = described ? append_guidance(out, *q.level_descriptions[i], at)
                           : append_json_string(out, q.levels[i], at);
        !s) {
      return s;
    }
  }
  out += ']';
  return {};
}

Status append_question(std::string& out, const Question& q) {
  const std::string where = "questions." + q.name;
  if (auto s = append_json_string(out, q.name, where); !s) return s;
  out += ":{\"type\":\"";
  out += to_string(q.type);
  out += "\",\"instructions\":";
  if (auto s = append_guidance(out, q.instructions, where + ".instructions"); !s) return s;
  Status criteria;
  switch (q.type) {
    case QuestionType::choice:
      criteria = append_choice_criteria(out, q, where);
      break;
    case QuestionType::yes_no:
      criteria = append_yes_no_criteria(out, q, where);
      break;
    case QuestionType::score:
      criteria = append_score_criteria(out, q, where);
      break;
    case QuestionType::box:
      break;  // a box takes no criteria
  }
  if (!criteria) return criteria;
  out += '}';
  return {};
}

// ---- reading ----------------------------------------------------------------------------------

/// A JSON value and where it was read, so an error can name the byte where the faulty field
/// starts.
struct Located {
  const Json& value;
  std::string path;                 ///< "questions.team.criteria"
  std::string_view document;        ///< The whole document, for the root; else empty.
  const Located* parent = nullptr;  ///< Outlives it: each lives in a caller's frame.
  std::optional<std::string> key;   ///< Its key in the parent object (none: the parent's place).

  /// The exact text the value was parsed from, a view into the document (empty when it cannot
  /// be found). Looked for only when an error names it: a search of the parent's text for every
  /// member read would cost n² over a large object.
  std::string_view text() const {
    if (!parent) return document;
    const std::string_view outer = parent->text();
    if (!key || outer.empty()) return outer;
    return member_text(outer, *key).value_or(std::string_view());
  }
};

class QuestionReader {
 public:
  explicit QuestionReader(std::string_view document) : m_document(document) {}

  Located member(const Located& object, const std::string& key) const {
    static const Json absent;
    const auto it = object.value.is_object() ? object.value.find(key) : object.value.end();
    return member(object, key, it != object.value.end() ? *it : absent);
  }
  /// Member `key` of `object` when its value is at hand (walking the members): no search.
  static Located member(const Located& object, const std::string& key, const Json& value) {
    return {value, object.path + "." + key, {}, &object, key};
  }

  Error error(const Located& at, const std::string& message) const {
    std::string where = at.path;
    if (const std::string_view text = at.text(); !text.empty()) {
      where += ", byte " + std::to_string(text.data() - m_document.data());
    }
    return make_error(ErrorKind::invalid_input, message, where);
  }

  Result<Guidance> guidance(const Located& at) const {
    if (at.value.is_string()) return Guidance(at.value.get<std::string>());
    if (at.value.is_object() || at.value.is_array())
      return Guidance::structured(clef::dump_json(at.value));
    return error(at, std::string("must be a string, or a JSON object or array, not ") +
                         at.value.type_name());
  }

  Result<Question> question(const std::string& name, const Located& q) const {
    if (!q.value.is_object()) return error(q, "a question must be an object");
    for (const auto& item : q.value.items()) {
      if (item.key() != "type" && item.key() != "instructions" && item.key() != "criteria") {
        return error(member(q, item.key(), item.value()),
                     "unknown field (a question has type, instructions and criteria only)");
      }
    }
    const Located type = member(q, "type");
    if (!q.value.contains("type") || !type.value.is_string()) {
      return error(type, "missing: \"choice\", \"noul\", \"score\" or \"box\"");
    }
    const Located instructions = member(q, "instructions");
    if (!q.value.contains("instructions")) return error(instructions, "missing");
    auto text = guidance(instructions);
    if (!text) return text.error();
    Question question;
    question.name = name;
    question.instructions = std::move(text).value();
    const std::string type_name = type.value.get<std::string>();
    const Located criteria = member(q, "criteria");
    Status read;
    if (type_name == "choice") {
      question.type = QuestionType::choice;
      read = choice_criteria(criteria, question);
    } else if (type_name == "noul") {
      question.type = QuestionType::yes_no;
      read = yes_no_criteria(criteria, question);
    } else if (type_name == "score") {
      question.type = QuestionType::score;
      read = score_criteria(criteria, question);
    } else if (type_name == "box") {
      question.type = QuestionType::box;
      if (q.value.contains("criteria")) {
        read = error(criteria, "a box question takes no criteria, only instructions");
      }
    } else {
      return error(type, "unknown type \"" + type_name + "\" (choice, noul, score or box)");
    }
    if (!read) return read.error();
    if (auto status = validate(question); !status) {
      Error failed = status.error();
      if (const std::string_view at = q.text(); !at.empty()) {
        failed.where += ", byte " + std::to_string(at.data() - m_document.data());
      }
      return failed;
    }
    return question;
  }

 private:
  Status choice_criteria(const Located& criteria, Question& question) const {
    if (!criteria.value.is_object()) {
      return error(criteria, "a choice needs an object of label: description");
    }
    if (criteria.value.size() > QuestionLimits::max_options) {
      // validate() refuses it by its count; its options are not read one by one.
      for (const auto& item : criteria.value.items())
        question.options.push_back({item.key(), std::nullopt});
      return {};
    }
    for (const auto& item : criteria.value.items()) {
      const Located option = member(criteria, item.key(), item.value());
      if (option.value.is_null()) {
        question.options.push_back({item.key(), std::nullopt});
        continue;
      }
      auto description = guidance(option);
      if (!description) return description.error();
      question.options.push_back({item.key(), std::move(description).value()});
    }
    return {};
  }

  Status yes_no_criteria(const Located& criteria, Question& question) const {
    if (criteria.value.is_null()) return {};
    if (!criteria.value.is_object()) {
      return error(criteria, "must be an object with \"true\" and/or \"false\"");
    }
    for (const auto& item : criteria.value.items()) {
      const Located side = member(criteria, item.key(), item.value());
      if (item.key() != "true" && item.key() != "false") {
        return error(side, "a noul question's criteria take only \"true\" and \"false\"");
      }
      if (!side.value.is_string()) return error(side, "must be a string");
      (item.key() == "true" ? question.true_means : question.false_means) =
          side.value.get<std::string>();
    }
    return {};
  }

  /// A level is a string (its own label), or a structured description: an object or array,
  /// sent as it is, labelled by its "level", "label" or "name" text when it has one ("Soon" for
  /// {"level": "Soon", "examples": […]}), else "level I".
  Status score_criteria(const Located& criteria, Question& question) const {
    if (!criteria.value.is_array()) {
      return error(criteria, "a score needs an array of level descriptions");
    }
    bool any_structured = false;
    for (std::size_t i = 0; i < criteria.value.size(); ++i) {
      const Json& value = criteria.value[i];
      if (value.is_string()) {
        question.levels.push_back(value.get<std::string>());
        question.level_descriptions.emplace_back();
        continue;
      }
      const Located level{value, criteria.path + "[" + std::to_string(i) + "]", {}, &criteria, {}};
      auto description = guidance(level);
      if (!description) return description.error();
      question.levels.push_back(structured_level_label(value, i));
      question.level_descriptions.emplace_back(std::move(description).value());
      any_structured = true;
    }
    if (!any_structured) question.level_descriptions.clear();
    return {};
  }

  static std::string structured_level_label(const Json& level, std::size_t index) {
    if (level.is_object()) {
      for (const char* key : {"level", "label", "name"}) {
        const std::string text = string_field(level, key);
        if (text.find_first_not_of(" \t\r\n") != std::string::npos) return text;
      }
    }
    return "level " + std::to_string(index);
  }

  std::string_view m_document;
};

}  // namespace

Status append_questions(std::string& out, const std::vector<Question>& questions) {
  out += '{';
  for (std::size_t i = 0; i < questions.size(); ++i) {
    if (i) out += ',';
    if (auto s = append_question(out, questions[i]); !s) return s;
  }
  out += '}';
  return {};
}

namespace {

bool same_guidance(const Guidance& a, const Guidance& b) {
  return a.is_structured() == b.is_structured() && a.text() == b.text();
}

bool same_guidance(const std::optional<Guidance>& a, const std::optional<Guidance>& b) {
  return a.has_value() == b.has_value() && (!a || same_guidance(*a, *b));
}

bool same_question(const Question& a, const Question& b) {
  if (a.name != b.name || a.type != b.type || !same_guidance(a.instructions, b.instructions) ||
      a.true_means != b.true_means || a.false_means != b.false_means || a.levels != b.levels ||
      a.options.size() != b.options.size() ||
      a.level_descriptions.size() != b.level_descriptions.size())
    return false;
  for (std::size_t i = 0; i < a.options.size(); ++i) {
    if (a.options[i].label != b.options[i].label ||
        !same_guidance(a.options[i].description, b.options[i].description))
      return false;
  }
  for (std::size_t i = 0; i < a.level_descriptions.size(); ++i) {
    if (!same_guidance(a.level_descriptions[i], b.level_descriptions[i])) return false;
  }
  return true;
}

}  // namespace

bool same_questions(const std::vector<Question>& a, const std::vector<Question>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (!same_question(a[i], b[i])) return false;
  }
  return true;
}

Result<std::shared_ptr<const PreparedQuestions>> QuestionMemo::prepare(
    const std::vector<Question>& questions) const {
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    if (m_last && same_questions(m_last->questions, questions)) return m_last;
  }
  if (auto s = validate(questions); !s) return s.error();
  auto prepared = std::make_shared<PreparedQuestions>();
  if (auto s = append_questions(prepared->wire_json, questions); !s) return s.error();
  prepared->questions = questions;
  std::shared_ptr<const PreparedQuestions> shared = std::move(prepared);
  std::lock_guard<std::mutex> lock(m_mutex);
  m_last = shared;
  return shared;
}

}  // namespace clef::detail

namespace clef {

Result<std::vector<Question>> parse_questions(std::string_view json_text) {
  auto parsed = clef::parse_json(json_text, "the questions");
  if (!parsed) return parsed.error();
  const detail::Json root = std::move(parsed).value();
  const detail::QuestionReader reader(json_text);
  const detail::Located questions{root, "questions", json_text, nullptr, std::nullopt};
  if (!root.is_object()) return reader.error(questions, "must be a JSON object of name: question");
  // Refused by its count before any question is read: each is checked against the others.
  if (root.size() > QuestionLimits::max_questions)
    return detail::check_question_count(root.size()).error();
  std::vector<Question> out;
  for (const auto& item : root.items()) {
    auto question = reader.question(item.key(), reader.member(questions, item.key(), item.value()));
    if (!question) return question.error();
    out.push_back(std::move(question).value());
  }
  if (auto status = validate(out); !status) return status.error();
  return out;
}

Result<std::string> questions_sha256(const std::vector<Question>& questions) {
  std::string wire;
  if (auto status = detail::append_questions(wire, questions); !status) return status.error();
  return sha256_hex(wire);
}

}  // namespace clef
