// The implementation of openai_dialect.hpp. The shapes are openai-python's
// decision_create_params.py and decision.py (public beta, 2026-10): a predicate has no criteria,
// so a yes/no question's meanings are appended to its instructions; instructions and
// descriptions are strings, so a structured one is sent as its JSON text; answers come back in
// question order, each with the question's name (null when unnamed), and a refusal is
// {"type": "refusal", "name"} with no reason.
#include "wire/openai_dialect.hpp"

#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "clef/json.hpp"

namespace clef::detail {
namespace {

Json text_of(const Guidance& guidance) {
  return guidance.text();  // plain text, or a structured value's compact JSON
}

Json predicate_instructions(const Question& q) {
  std::string text = q.instructions.text();
  if (q.true_means) text += "\nTrue means: " + *q.true_means;
  if (q.false_means) text += "\nFalse means: " + *q.false_means;
  return text;
}

const char* openai_type(QuestionType type) {
  switch (type) {
    case QuestionType::yes_no:
      return "predicate";
    case QuestionType::choice:
      return "choice";
    case QuestionType::score:
      return "score";
    case QuestionType::box:
      return "";  // refused before the body is written (wire_request.cpp)
  }
  return "";
}

Json choices_json(const Question& q) {
  Json choices = Json::array();
  for (const auto& option : q.options) {
    Json choice = {{"value", option.label}};
    if (option.description && !option.description->blank()) {
      choice["description"] = text_of(*option.description);
    }
    choices.push_back(std::move(choice));
  }
  return choices;
}

Json levels_json(const Question& q) {
  Json levels = Json::array();
  for (std::size_t i = 0; i < q.levels.size(); ++i) {
    Json level = {{"label", q.levels[i]}};
    if (i < q.level_descriptions.size() && q.level_descriptions[i]) {
      level["description"] = text_of(*q.level_descriptions[i]);
    }
    levels.push_back(std::move(level));
  }
  return levels;
}

Json question_json(const Question& q) {
  Json out = {{"type", openai_type(q.type)},
              {"name", q.name},
              {"instructions", q.type == QuestionType::yes_no ? predicate_instructions(q)
                                                              : text_of(q.instructions)}};
  if (q.type == QuestionType::choice) out["choices"] = choices_json(q);
  if (q.type == QuestionType::score) out["levels"] = levels_json(q);
  return out;
}

/// The state as OpenAI's input: its text, or a JSON state's JSON text; with images, one user
/// message of an input_text part and an input_image part per image (data URLs).
Json input_json(const DecisionRequest& request) {
  auto state = clef::parse_json(request.state.wire_json(), "state");
  Json text = state && state->is_string() ? Json(state->get<std::string>())
                                          : Json(request.state.wire_json());
  if (request.images.empty()) return text;
  Json content = Json::array({{{"type", "input_text"}, {"text", std::move(text)}}});
  for (const auto& image : request.images) {
    content.push_back({{"type", "input_image"}, {"image_url", image.data_url()}});
  }
  return Json::array({{{"role", "user"}, {"content", std::move(content)}}});
}

/// "true (a JSON boolean)" for messages: a boolean is never one of clef's (text) labels.
std::string boolean_text(const Json& value) {
  return std::string(value.get<bool>() ? "true" : "false") + " (a JSON boolean)";
}

/// Keeps the first problem found: the one a reader should fix first.
void note(std::string& problem, std::string text) {
  if (problem.empty()) problem = std::move(text);
}

/// The entry's "value" when it is an object with a value and a probability, else a problem.
const Json* entry_value(const Json& entry, std::string& problem) {
  const auto value = entry.is_object() ? entry.find("value") : entry.end();
  if (value == entry.end() || !entry.contains("probability")) {
    note(problem, "a probabilities entry is not {\"value\", \"probability\"}: " +
                      clef::dump_json(entry).substr(0, 80));
    return nullptr;
  }
  return &*value;
}

/// {key: value} built in one pass however many keys come (an ordered_json object finds a key by
/// looking at each member: a server's 450,000 entries took minutes). A key set again keeps its
/// first place and takes the last value, as assigning to the object would.
class KeyedValues {
 public:
  /// False when `key` was set before: its value is replaced.
  bool set(std::string key, const Json& value) {
    const auto [at, added] = m_at.emplace(key, m_members.size());
    if (!added) {
      m_members[at->second].second = value;
      return false;
    }
    m_members.emplace_back(std::move(key), value);
    return true;
  }

  Json object() && {
    Json out(Json::value_t::object);
    auto& members = out.get_ref<Json::object_t&>();
    members.reserve(m_members.size());
    for (auto& [key, value] : m_members) members.emplace_back(std::move(key), std::move(value));
    return out;
  }

 private:
  std::unordered_map<std::string, std::size_t> m_at;
  std::vector<std::pair<std::string, Json>> m_members;
};

/// A choice's [{value, probability}] as {label: probability}. A boolean value, an entry that
/// is not an option's text, or a value given twice is a problem: nothing is dropped unsaid.
Json choice_answer(const Json& answer, std::string& problem) {
  Json out = {{"type", "choice"}};
  const auto choice = answer.find("choice");
  if (choice == answer.end()) note(problem, "the answer has no \"choice\"");
  if (choice != answer.end()) {
    if (choice->is_boolean()) {
      note(problem, "\"choice\" is " + boolean_text(*choice) + ", not one of the options' text");
    }
    out["choice"] = *choice;
  }
  if (auto confidence = answer.find("confidence"); confidence != answer.end()) {
    out["confidence"] = *confidence;
  }
  const auto probabilities = answer.find("probabilities");
  if (probabilities == answer.end() || !probabilities->is_array()) return out;
  KeyedValues map;
  for (const auto& entry : *probabilities) {
    const Json* value = entry_value(entry, problem);
    if (!value) continue;
    if (value->is_boolean()) {
      note(problem,
           "a probability is for " + boolean_text(*value) + ", not one of the options' text");
      continue;
    }
    if (!value->is_string()) {
      note(problem, "a probability is for " + clef::dump_json(*value) + ", not an option's text");
      continue;
    }
    const std::string label = value->get<std::string>();
    if (!map.set(label, entry["probability"]))
      note(problem, "\"" + label + "\" has two probabilities");
  }
  out["probabilities"] = std::move(map).object();
  return out;
}

/// A score's [{value: index, label, probability}] as {"INDEX": probability}, each index a whole
/// number given once, with its level's label.
Json score_answer(const Json& answer, const Question& q, std::string& problem) {
  Json out = {{"type", "score"}};
  for (const char* key : {"score", "confidence"}) {
    if (auto field = answer.find(key); field != answer.end()) out[key] = *field;
  }
  if (out.contains("score") && !out["score"].is_number()) {
    note(problem, "\"score\" is " + clef::dump_json(out["score"]) + ", not a number");
  }
  const auto probabilities = answer.find("probabilities");
  if (probabilities == answer.end() || !probabilities->is_array()) return out;
  KeyedValues map;
  for (const auto& entry : *probabilities) {
    const Json* value = entry_value(entry, problem);
    if (!value) continue;
    if (!value->is_number_unsigned()) {
      note(problem, "a level is " + clef::dump_json(*value) + ", not a level index (0, 1, ...)");
      continue;
    }
    const auto index = value->get<std::uint64_t>();
    const auto label = entry.find("label");
    if (index < q.levels.size() && (label == entry.end() || !label->is_string())) {
      note(problem, "level " + std::to_string(index) + " has no label");
    } else if (index < q.levels.size() && label->get<std::string>() != q.levels[index]) {
      note(problem, "level " + std::to_string(index) + " is labelled \"" +
                        label->get<std::string>() + "\", not \"" + q.levels[index] + "\"");
    }
    const std::string key = std::to_string(index);
    if (!map.set(key, entry["probability"]))
      note(problem, "level " + key + " has two probabilities");
  }
  out["probabilities"] = std::move(map).object();
  return out;
}

/// One answer in System One's shape, or null when it cannot stand for question `q`.
Json systemone_answer(const Json& answer, const Question& q, std::string& problem) {
  if (!answer.is_object()) return answer;  // the parser says "not an object"
  if (const auto name = answer.find("name");
      name != answer.end() && !name->is_null() && *name != Json(q.name)) {
    problem = "the answer in this question's place is for " + clef::dump_json(*name);
    return Json();
  }
  const auto type = answer.find("type");
  const std::string kind =
      type != answer.end() && type->is_string() ? type->get<std::string>() : "";
  if (kind == "predicate") {
    Json out = {{"type", "noul"}};
    if (auto p = answer.find("probability"); p != answer.end()) out["noul"] = *p;
    return out;
  }
  if (kind == "choice") return choice_answer(answer, problem);
  if (kind == "score") return score_answer(answer, q, problem);
  if (kind == "refusal") return {{"type", "refusal"}};
  // System One's own names ("noul") included: this dialect never sends them.
  note(problem, (kind.empty() ? std::string("an answer without a type")
                              : "\"" + kind + "\" is not one of OpenAI's answer types") +
                    " (predicate, choice, score, refusal)");
  return answer;
}

}  // namespace

Result<std::string> openai_request_body(const DecisionRequest& request, const std::string& model) {
  Json body = Json::object();
  body["model"] = model;
  body["input"] = input_json(request);
  Json questions = Json::array();
  for (const auto& q : request.questions) questions.push_back(question_json(q));
  body["questions"] = std::move(questions);
  return clef::dump_json(body);
}

Result<Json> openai_body_as_systemone(const Json& body, const std::vector<Question>& questions,
                                      std::vector<DialectProblem>& problems) {
  if (!body.is_object()) {
    return make_error(ErrorKind::invalid_response, "the response is not a JSON object", "$");
  }
  const auto answers = body.find("answers");
  if (answers == body.end() || !answers->is_array()) {
    return make_error(ErrorKind::invalid_response,
                      "the response has no \"answers\" array (OpenAI's decisions answer in "
                      "question order)",
                      "answers");
  }
  if (answers->size() > questions.size()) {
    return make_error(ErrorKind::invalid_response,
                      std::to_string(answers->size()) + " answers to " +
                          std::to_string(questions.size()) + " questions",
                      "answers");
  }
  Json out = Json::object();
  for (const char* key : {"model", "usage"}) {
    if (auto field = body.find(key); field != body.end()) out[key] = *field;
  }
  Json map = Json::object();
  for (std::size_t i = 0; i < answers->size(); ++i) {
    std::string problem;
    Json answer = systemone_answer((*answers)[i], questions[i], problem);
    if (!problem.empty()) problems.push_back({questions[i].name, std::move(problem)});
    if (!answer.is_null()) map[questions[i].name] = std::move(answer);
  }
  out["answers"] = std::move(map);
  return out;
}

}  // namespace clef::detail
