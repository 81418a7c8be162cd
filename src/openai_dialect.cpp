// The implementation of openai_dialect.hpp. The shapes are openai-python's
// decision_create_params.py and decision.py (public beta, 2026-10): a predicate has no criteria,
// so a yes/no question's meanings are appended to its instructions; instructions and
// descriptions are strings, so a structured one is sent as its JSON text; answers come back in
// question order, each with the question's name (null when unnamed), and a refusal is
// {"type": "refusal", "name"} with no reason.
#include "openai_dialect.hpp"

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

Json question_json(const Question& q) {
  Json out = Json::object();
  switch (q.type) {
    case QuestionType::yes_no:
      out["type"] = "predicate";
      out["name"] = q.name;
      out["instructions"] = predicate_instructions(q);
      return out;
    case QuestionType::choice: {
      out["type"] = "choice";
      out["name"] = q.name;
      out["instructions"] = text_of(q.instructions);
      Json choices = Json::array();
      for (const auto& option : q.options) {
        Json choice = {{"value", option.label}};
        if (option.description && !option.description->blank()) {
          choice["description"] = text_of(*option.description);
        }
        choices.push_back(std::move(choice));
      }
      out["choices"] = std::move(choices);
      return out;
    }
    case QuestionType::score: {
      out["type"] = "score";
      out["name"] = q.name;
      out["instructions"] = text_of(q.instructions);
      Json levels = Json::array();
      for (std::size_t i = 0; i < q.levels.size(); ++i) {
        Json level = {{"label", q.levels[i]}};
        if (i < q.level_descriptions.size() && q.level_descriptions[i]) {
          level["description"] = text_of(*q.level_descriptions[i]);
        }
        levels.push_back(std::move(level));
      }
      out["levels"] = std::move(levels);
      return out;
    }
  }
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

/// A choice's [{value, probability}] as {label: probability}; a boolean value is a problem.
Json choice_answer(const Json& answer, std::string& problem) {
  Json out = {{"type", "choice"}};
  if (auto choice = answer.find("choice"); choice != answer.end()) {
    if (choice->is_boolean()) {
      problem = "\"choice\" is " + boolean_text(*choice) + ", not one of the options' text";
    }
    out["choice"] = *choice;
  }
  if (auto confidence = answer.find("confidence"); confidence != answer.end()) {
    out["confidence"] = *confidence;
  }
  const auto probabilities = answer.find("probabilities");
  if (probabilities == answer.end() || !probabilities->is_array()) return out;
  Json map = Json::object();
  for (const auto& entry : *probabilities) {
    const auto value = entry.is_object() ? entry.find("value") : entry.end();
    if (value == entry.end()) continue;
    if (value->is_boolean() && problem.empty()) {
      problem = "a probability is for " + boolean_text(*value) + ", not one of the options' text";
    }
    if (!value->is_string()) continue;
    const auto p = entry.find("probability");
    map[value->get<std::string>()] = p == entry.end() ? Json() : *p;
  }
  out["probabilities"] = std::move(map);
  return out;
}

/// A score's [{value: index, label, probability}] as {"INDEX": probability}.
Json score_answer(const Json& answer, const Question& q, std::string& problem) {
  Json out = {{"type", "score"}};
  for (const char* key : {"score", "confidence"}) {
    if (auto field = answer.find(key); field != answer.end()) out[key] = *field;
  }
  const auto probabilities = answer.find("probabilities");
  if (probabilities == answer.end() || !probabilities->is_array()) return out;
  Json map = Json::object();
  for (const auto& entry : *probabilities) {
    const auto value = entry.is_object() ? entry.find("value") : entry.end();
    if (value == entry.end() || !value->is_number_unsigned()) continue;
    const auto index = value->get<std::uint64_t>();
    const auto label = entry.find("label");
    if (index < q.levels.size() && label != entry.end() && label->is_string() &&
        label->get<std::string>() != q.levels[index] && problem.empty()) {
      problem = "level " + std::to_string(index) + " is labelled \"" + label->get<std::string>() +
                "\", not \"" + q.levels[index] + "\"";
    }
    const auto p = entry.find("probability");
    map[std::to_string(index)] = p == entry.end() ? Json() : *p;
  }
  out["probabilities"] = std::move(map);
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
  // Anything else ("noul", a typo, no type) is passed on and named by the parser.
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
