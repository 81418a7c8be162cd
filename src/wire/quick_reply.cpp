// The implementation of quick_reply.hpp.
#include "wire/quick_reply.hpp"

#include "util/json_cursor.hpp"
#include "wire/answer_checks.hpp"
#include "wire/wire_response.hpp"

namespace clef::detail {
namespace {

/// More questions, options or levels than this: the general reader (lookups here are linear).
constexpr std::size_t most_names = 64;

/// What an answer object carries that the checks read.
struct Fields {
  std::string_view type;
  bool typed = false;
  std::vector<double> p;  ///< In the question's order; -1 where none was sent.
  bool has_probabilities = false;
  SentChoice choice;
  std::optional<double> confidence, noul, score;
};

/// The index of the option (choice) or level (score) that `key` names, or past the end.
std::size_t option_index(const Question& q, std::string_view key) {
  if (q.type == QuestionType::choice) {
    std::size_t i = 0;
    while (i < q.options.size() && q.options[i].label != key) ++i;
    return i;
  }
  // A level's key is its number as std::to_string writes it: no sign, no leading zero.
  if (key.empty() || key.size() > 2 || (key.size() == 2 && key[0] == '0')) return q.levels.size();
  std::size_t level = 0;
  for (char c : key) {
    if (c < '0' || c > '9') return q.levels.size();
    level = level * 10 + static_cast<std::size_t>(c - '0');
  }
  return level < q.levels.size() ? level : q.levels.size();
}

bool read_probabilities(JsonCursor& json, const Question& q, Fields& fields) {
  const std::size_t n = q.type == QuestionType::choice ? q.options.size() : q.levels.size();
  fields.p.assign(n, -1.0);
  JsonCursor::Members members(json);
  std::string_view key;
  while (members.next(key)) {
    const std::size_t i = option_index(q, key);
    if (i >= n || fields.p[i] >= 0) return false;  // unknown, or sent twice
    const auto p = json.number_if_any();
    if (!p || !is_probability(*p)) return false;
    fields.p[i] = *p;
  }
  for (double p : fields.p) {
    if (p < 0) return false;
  }
  return json.ok();
}

/// Reads a number member into `out` (anything else reads as none, as number_field has it).
bool read_number(JsonCursor& json, std::optional<double>& out, bool& seen) {
  if (seen) return false;
  seen = true;
  out = json.number_if_any();
  if (!out) json.skip();
  return json.ok();
}

bool read_answer(JsonCursor& json, const Question& q, Fields& fields) {
  const bool choice = q.type == QuestionType::choice;
  const bool score = q.type == QuestionType::score;
  bool seen_choice = false, seen_confidence = false, seen_noul = false, seen_score = false;
  JsonCursor::Members members(json);
  std::string_view key;
  while (members.next(key)) {
    bool read = true;
    if (key == "type") {
      if (fields.typed) return false;
      fields.typed = true;
      const auto type = json.plain_string();
      if (!type) return false;
      fields.type = *type;
    } else if (key == "probabilities" && (choice || score)) {
      if (fields.has_probabilities) return false;
      fields.has_probabilities = true;
      read = read_probabilities(json, q, fields);
    } else if (key == "choice" && choice) {
      if (seen_choice) return false;
      seen_choice = true;
      const auto text = json.plain_string();
      if (!text) return false;
      fields.choice = {SentChoice::Form::text, *text};
    } else if (key == "confidence") {
      read = read_number(json, fields.confidence, seen_confidence);
    } else if (key == "noul" && q.type == QuestionType::yes_no) {
      read = read_number(json, fields.noul, seen_noul);
    } else if (key == "score" && score) {
      read = read_number(json, fields.score, seen_score);
    } else {
      json.skip();
    }
    if (!read) return false;
  }
  return json.ok() && fields.typed && fields.type == to_string(q.type) &&
         (fields.has_probabilities || !(choice || score));
}

/// The answer to `q` from its object, read at the cursor.
std::optional<Answer> answer_to(JsonCursor& json, const Question& q, const ValidationOptions& v) {
  if (json.peek() == 'n') {  // null: no answer, as when the member is missing
    json.skip();
    return unanswered(q);
  }
  const std::size_t begin = json.position();
  Fields fields;
  if (json.peek() != '{' || !read_answer(json, q, fields)) return std::nullopt;
  Answer a = answer_for(q);
  a.raw_json = std::string(json.text_between(begin, json.offset()));
  a.status = AnswerStatus::ok;
  switch (q.type) {
    case QuestionType::choice:
      finish_choice(std::move(fields.p), fields.choice, fields.confidence, q, v, a);
      break;
    case QuestionType::yes_no:
      finish_yes_no(fields.noul, v, a);
      break;
    case QuestionType::score:
      finish_score(std::move(fields.p), fields.score, fields.confidence, q, v, a);
      break;
    case QuestionType::box:
      return std::nullopt;
  }
  return a;
}

bool read_answers(JsonCursor& json, const std::vector<Question>& questions,
                  const ValidationOptions& v, std::vector<std::optional<Answer>>& answers) {
  JsonCursor::Members members(json);
  std::string_view key;
  while (members.next(key)) {
    std::size_t i = 0;
    while (i < questions.size() && questions[i].name != key) ++i;
    if (i == questions.size()) {
      json.skip();
      continue;
    }
    if (answers[i]) return false;  // sent twice
    answers[i] = answer_to(json, questions[i], v);
    if (!answers[i]) return false;
    for (std::size_t same = i + 1; same < questions.size(); ++same) {
      if (questions[same].name == key) return false;  // two questions of one name
    }
  }
  return json.ok();
}

bool read_usage(JsonCursor& json, Usage& usage) {
  bool seen_input = false, seen_output = false;
  JsonCursor::Members members(json);
  std::string_view key;
  while (members.next(key)) {
    std::optional<double> count;
    if (key == "input_tokens") {
      if (!read_number(json, count, seen_input)) return false;
      usage.input_tokens = token_count(count.value_or(0));
    } else if (key == "output_tokens") {
      if (!read_number(json, count, seen_output)) return false;
      usage.output_tokens = token_count(count.value_or(0));
    } else {
      return false;  // cached tokens, neurons, a cost: the general reader's
    }
  }
  return json.ok();
}

bool fits(const std::vector<Question>& questions) {
  if (questions.size() > most_names) return false;
  for (const auto& q : questions) {
    if (q.type == QuestionType::box || q.options.size() > most_names ||
        q.levels.size() > most_names) {
      return false;
    }
  }
  return true;
}

}  // namespace

std::optional<Decision> read_quick_reply(std::string_view text,
                                         const std::vector<Question>& questions,
                                         const ValidationOptions& validation) {
  if (!fits(questions)) return std::nullopt;
  JsonCursor json(text);
  Decision decision;
  std::vector<std::optional<Answer>> answers(questions.size());
  bool seen_model = false, seen_usage = false, seen_answers = false;
  JsonCursor::Members members(json);
  std::string_view key;
  while (members.next(key)) {
    bool* seen = key == "model"     ? &seen_model
                 : key == "usage"   ? &seen_usage
                 : key == "answers" ? &seen_answers
                                    : nullptr;
    if (seen && *seen) return std::nullopt;  // sent twice: the tree reader keeps the last
    if (seen) *seen = true;
    const char next = json.peek();
    bool read = true;
    if (key == "model" && next == '"') {
      const auto model = json.plain_string();
      if (model) decision.model = std::string(*model);
    } else if (key == "usage" && next == '{') {
      read = read_usage(json, decision.usage);
    } else if (key == "answers") {
      read = next == '{' && read_answers(json, questions, validation, answers);
    } else {
      json.skip();  // a model or usage of another kind reads as none, as parse_decision has it
    }
    if (!read) return std::nullopt;
  }
  if (!json.ok() || !json.at_end() || !seen_answers) return std::nullopt;
  decision.answers.reserve(questions.size());
  for (std::size_t i = 0; i < questions.size(); ++i) {
    decision.answers.push_back(answers[i] ? std::move(*answers[i]) : unanswered(questions[i]));
  }
  decision.raw_json = std::string(text);
  return decision;
}

}  // namespace clef::detail
