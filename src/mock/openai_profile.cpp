// The implementation of openai_profile.hpp. Fields and limits: openai-python's
// decision_create_params.py and decision.py — model, input (a string or user messages of
// input_text and input_image parts, data URLs only, at most 128 images), questions (1 to 400;
// predicate with no criteria, choice with 2 to 255 unique typed values, score with labelled
// levels), safety_identifier; answers in question order with the question's name or null. What
// the sources leave open is the mock's assumption, said in the README: score levels 2 to 10,
// unrounded floats, confidence as the other non-entropy profiles compute it.
#include "mock/openai_profile.hpp"

#include <algorithm>
#include <set>
#include <vector>

#include "mock/answers.hpp"
#include "mock/checks.hpp"
#include "mock/rules.hpp"
#include "util/json_text.hpp"

namespace clef::mock_detail {
namespace {

constexpr std::size_t max_questions = 400;
constexpr std::size_t max_choices = 255;
constexpr std::size_t max_images = 128;
constexpr std::size_t max_levels = 10;

using Problem = std::optional<OpenAiProblem>;

Problem problem(std::string message, std::string param) {
  return OpenAiProblem{std::move(message), std::move(param)};
}

bool non_empty_string(const Json* value) {
  return value && value->is_string() && !value->get_ref<const std::string&>().empty();
}

/// Fields other than `allowed`: OpenAI's "Unrecognized request argument".
Problem unknown_fields(const Json& object, const std::set<std::string>& allowed,
                       const std::string& at) {
  for (const auto& item : object.items()) {
    if (!allowed.count(item.key())) {
      return problem("Unrecognized request argument supplied: " + at + item.key(), at + item.key());
    }
  }
  return std::nullopt;
}

Problem check_part(const Json& part, const std::string& at, std::size_t& images) {
  const Json* type = part.is_object() ? member(part, "type") : nullptr;
  if (type && *type == "input_text") {
    if (!member(part, "text") || !member(part, "text")->is_string()) {
      return problem("Missing required parameter: '" + at + ".text'.", at + ".text");
    }
    return unknown_fields(part, {"type", "text"}, at + ".");
  }
  if (type && *type == "input_image") {
    const Json* url = member(part, "image_url");
    if (!non_empty_string(url) || url->get_ref<const std::string&>().rfind("data:image/", 0) != 0) {
      return problem("Invalid '" + at + ".image_url': images must be data URLs.",
                     at + ".image_url");
    }
    if (++images > max_images) return problem("At most 128 images are allowed.", at);
    return unknown_fields(part, {"type", "image_url", "detail"}, at + ".");
  }
  return problem("Invalid value for '" + at + ".type': expected 'input_text' or 'input_image'.",
                 at + ".type");
}

Problem check_input(const Json* input) {
  if (!input) return problem("Missing required parameter: 'input'.", "input");
  if (input->is_string()) return std::nullopt;
  if (!input->is_array() || input->empty()) {
    return problem("Invalid type for 'input': expected a string or an array of messages.", "input");
  }
  std::size_t images = 0;
  for (std::size_t i = 0; i < input->size(); ++i) {
    const std::string at = "input[" + std::to_string(i) + "]";
    const Json& message = (*input)[i];
    if (!message.is_object() || !member(message, "role") || *member(message, "role") != "user") {
      return problem("Invalid value for '" + at + ".role': only 'user' messages are supported.",
                     at + ".role");
    }
    if (auto p = unknown_fields(message, {"type", "role", "content"}, at + ".")) return p;
    const Json* content = member(message, "content");
    if (content && content->is_string()) continue;
    if (!content || !content->is_array()) {
      return problem("Missing required parameter: '" + at + ".content'.", at + ".content");
    }
    for (std::size_t j = 0; j < content->size(); ++j) {
      const std::string part_at = at + ".content[" + std::to_string(j) + "]";
      if (auto p = check_part((*content)[j], part_at, images)) return p;
    }
  }
  return std::nullopt;
}

Problem check_choices(const Json& q, const std::string& at) {
  const Json* choices = member(q, "choices");
  if (!choices || !choices->is_array() || choices->size() < 2 || choices->size() > max_choices) {
    return problem("Invalid '" + at + ".choices': provide between 2 and 255 choices.",
                   at + ".choices");
  }
  std::set<std::string> seen;  // typed: "s:true" and "b:true" are different choices
  for (std::size_t i = 0; i < choices->size(); ++i) {
    const std::string c_at = at + ".choices[" + std::to_string(i) + "]";
    const Json& choice = (*choices)[i];
    const Json* value = choice.is_object() ? member(choice, "value") : nullptr;
    if (!value || !(value->is_string() || value->is_boolean())) {
      return problem("Invalid type for '" + c_at + ".value': expected a string or a boolean.",
                     c_at + ".value");
    }
    const Json* description = member(choice, "description");
    if (description && !description->is_string() && !description->is_null()) {
      return problem("Invalid type for '" + c_at + ".description': expected a string.",
                     c_at + ".description");
    }
    if (auto p = unknown_fields(choice, {"value", "description"}, c_at + ".")) return p;
    const std::string key = (value->is_boolean() ? "b:" : "s:") + clef::dump_json(*value);
    if (!seen.insert(key).second) {
      return problem("Invalid '" + at + ".choices': each choice must be unique.", c_at + ".value");
    }
  }
  return std::nullopt;
}

Problem check_levels(const Json& q, const std::string& at) {
  const Json* levels = member(q, "levels");
  if (!levels || !levels->is_array() || levels->size() < 2 || levels->size() > max_levels) {
    return problem("Invalid '" + at + ".levels': provide between 2 and 10 levels.", at + ".levels");
  }
  for (std::size_t i = 0; i < levels->size(); ++i) {
    const std::string l_at = at + ".levels[" + std::to_string(i) + "]";
    const Json& level = (*levels)[i];
    if (!level.is_object() || !non_empty_string(member(level, "label"))) {
      return problem("Missing required parameter: '" + l_at + ".label'.", l_at + ".label");
    }
    if (auto p = unknown_fields(level, {"label", "description"}, l_at + ".")) return p;
  }
  return std::nullopt;
}

Problem check_question(const Json& q, const std::string& at) {
  if (!q.is_object()) return problem("Invalid type for '" + at + "': expected an object.", at);
  const Json* type = member(q, "type");
  const Json* name = member(q, "name");
  if (name && !name->is_string() && !name->is_null()) {
    return problem("Invalid type for '" + at + ".name': expected a string.", at + ".name");
  }
  if (!non_empty_string(member(q, "instructions"))) {
    return problem("Missing required parameter: '" + at + ".instructions'.", at + ".instructions");
  }
  if (type && *type == "predicate")
    return unknown_fields(q, {"type", "name", "instructions"}, at + ".");
  if (type && *type == "choice") {
    if (auto p = unknown_fields(q, {"type", "name", "instructions", "choices"}, at + ".")) return p;
    return check_choices(q, at);
  }
  if (type && *type == "score") {
    if (auto p = unknown_fields(q, {"type", "name", "instructions", "levels"}, at + ".")) return p;
    return check_levels(q, at);
  }
  return problem("Invalid value for '" + at + ".type': expected 'predicate', 'choice' or 'score'.",
                 at + ".type");
}

}  // namespace

std::optional<OpenAiProblem> check_openai_body(const Json& body) {
  if (!body.is_object()) return problem("The request body must be a JSON object.", "");
  if (auto p = unknown_fields(body, {"model", "input", "questions", "safety_identifier"}, "")) {
    return p;
  }
  if (!non_empty_string(member(body, "model"))) {
    return problem("Missing required parameter: 'model'.", "model");
  }
  if (auto p = check_input(member(body, "input"))) return p;
  const Json* questions = member(body, "questions");
  if (!questions || !questions->is_array() || questions->empty() ||
      questions->size() > max_questions) {
    return problem("Invalid 'questions': provide between 1 and 400 questions.", "questions");
  }
  for (std::size_t i = 0; i < questions->size(); ++i) {
    if (auto p = check_question((*questions)[i], "questions[" + std::to_string(i) + "]")) return p;
  }
  return std::nullopt;
}

std::string openai_input_text(const Json& input) {
  if (input.is_string()) return input.get<std::string>();
  std::string text;
  if (!input.is_array()) return text;
  for (const auto& message : input) {
    const Json* content = message.is_object() ? member(message, "content") : nullptr;
    if (!content) continue;
    if (content->is_string()) text += (text.empty() ? "" : "\n") + content->get<std::string>();
    if (!content->is_array()) continue;
    for (const auto& part : *content) {
      const Json* type = part.is_object() ? member(part, "type") : nullptr;
      const Json* part_text = part.is_object() ? member(part, "text") : nullptr;
      if (type && *type == "input_text" && part_text && part_text->is_string()) {
        text += (text.empty() ? "" : "\n") + part_text->get<std::string>();
      }
    }
  }
  return text;
}

}  // namespace clef::mock_detail

namespace clef::mock_detail {
namespace {

/// The labels the simulated model sees for a choice's typed values, all distinct: a string's
/// text, a boolean's ("true"), or when a string already has that text "true (boolean)", then
/// "true (boolean 2)" and so on — so rules name them as written.
std::vector<std::string> choice_labels(const Json& choices) {
  std::set<std::string> taken;
  for (const auto& choice : choices) {
    if (choice["value"].is_string()) taken.insert(choice["value"].get<std::string>());
  }
  std::vector<std::string> labels;
  for (const auto& choice : choices) {
    const Json& value = choice["value"];
    if (value.is_string()) {
      labels.push_back(value.get<std::string>());
      continue;
    }
    const std::string text = value.get<bool>() ? "true" : "false";
    std::string label = text;
    for (int n = 1; taken.count(label); ++n) {
      label = text + (n == 1 ? " (boolean)" : " (boolean " + std::to_string(n) + ")");
    }
    taken.insert(label);
    labels.push_back(label);
  }
  return labels;
}

/// The question as the simulated model (System One's shape) reads it.
Json as_systemone_question(const Json& q, const std::vector<std::string>& labels) {
  const std::string type = q["type"].get<std::string>();
  if (type == "predicate") return {{"type", "noul"}, {"instructions", q["instructions"]}};
  if (type == "choice") {
    Json criteria = Json::object();
    for (std::size_t i = 0; i < labels.size(); ++i) {
      const auto description = q["choices"][i].find("description");
      const bool described = description != q["choices"][i].end() && description->is_string();
      criteria[labels[i]] = described ? *description : Json();
    }
    return {{"type", "choice"}, {"instructions", q["instructions"]}, {"criteria", criteria}};
  }
  Json criteria = Json::array();
  for (const auto& level : q["levels"]) criteria.push_back(level["label"]);
  return {{"type", "score"}, {"instructions", q["instructions"]}, {"criteria", criteria}};
}

/// The simulated answer in OpenAI's shape: typed choice values, level index and label.
Json as_openai_answer(const Json& q, const std::vector<std::string>& labels, const Json& inner,
                      const Json& name) {
  const std::string type = q["type"].get<std::string>();
  if (type == "predicate") {
    return {{"type", "predicate"}, {"name", name}, {"probability", inner["noul"]}};
  }
  Json probabilities = Json::array();
  Json out = {{"type", type}, {"name", name}};
  if (type == "choice") {
    Json chosen;
    for (std::size_t i = 0; i < labels.size(); ++i) {
      const Json& value = q["choices"][i]["value"];
      if (inner["choice"] == labels[i]) chosen = value;
      probabilities.push_back(
          {{"value", value}, {"probability", inner["probabilities"][labels[i]]}});
    }
    out["choice"] = chosen;
  } else {
    for (std::size_t i = 0; i < q["levels"].size(); ++i) {
      probabilities.push_back({{"value", i},
                               {"label", q["levels"][i]["label"]},
                               {"probability", inner["probabilities"][std::to_string(i)]}});
    }
    out["score"] = inner["score"];
  }
  out["confidence"] = inner["confidence"];
  out["probabilities"] = std::move(probabilities);
  return out;
}

}  // namespace

Json openai_decision(const MockSettings& s, const Decoded& decoded, std::size_t body_bytes,
                     int call) {
  const Flaws flaws{s.faults.position_bias, s.faults.noise, s.faults.seed, call};
  const Json& questions = (*decoded.body)["questions"];
  Json answers = Json::array();
  for (std::size_t i = 0; i < questions.size(); ++i) {
    const Json& q = questions[i];
    const auto name_field = q.find("name");
    const Json name = name_field == q.end() ? Json() : *name_field;
    // An unnamed question is known to the rules by its place: "questions[2]".
    const std::string key =
        name.is_string() ? name.get<std::string>() : "questions[" + std::to_string(i) + "]";
    const std::vector<std::string> labels =
        q["type"] == "choice" ? choice_labels(q["choices"]) : std::vector<std::string>();
    const MockRule* rule = rule_for(s.rules, decoded.model, key, decoded.state_text);
    const bool has_refusal_option =
        std::find(labels.begin(), labels.end(), "refusal") != labels.end();
    if (rule && rule->answer == "refusal" && !has_refusal_option) {
      answers.push_back({{"type", "refusal"}, {"name", name}});
      continue;
    }
    const Json inner = answer_for(MockProfile::openai, decoded.state_json, key,
                                  as_systemone_question(q, labels), rule, flaws);
    answers.push_back(as_openai_answer(q, labels, inner, name));
  }
  const auto tokens = static_cast<long long>(body_bytes / 4);
  return {{"model", decoded.model},
          {"answers", std::move(answers)},
          {"usage",
           {{"input_tokens", tokens},
            {"input_tokens_details", {{"cached_tokens", 0}, {"cache_write_tokens", 0}}},
            {"output_tokens", 0},
            {"output_tokens_details", {{"reasoning_tokens", 0}}},
            {"total_tokens", tokens}}}};
}

}  // namespace clef::mock_detail
