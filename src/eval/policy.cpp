// The implementation of clef/policy.hpp: confidence thresholds fitted by
// `clef eval --fit-thresholds`, applied to new answers so confident ones are routed and the rest
// go to a person.
#include "clef/policy.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "clef/digest.hpp"
#include "model/question_wire.hpp"
#include "util/json_text.hpp"

namespace clef {
namespace {

constexpr const char* policy_schema = "clef-policy/1";

/// A threshold as the file holds it: a probability in [0, 1], or null (nothing is trusted).
Result<std::optional<double>> threshold_of(const detail::Json& value, const std::string& where) {
  if (value.is_null()) return std::optional<double>();
  if (!value.is_number() || value.get<double>() < 0 || value.get<double>() > 1) {
    return make_error(ErrorKind::invalid_input, "a threshold must be a number in [0, 1] or null",
                      where);
  }
  return std::optional<double>(value.get<double>());
}

Result<QuestionPolicy> question_policy(const detail::Json& value, const std::string& where) {
  if (!value.is_object()) return make_error(ErrorKind::invalid_input, "must be an object", where);
  QuestionPolicy out;
  const auto threshold = value.find("threshold");
  if (threshold == value.end()) {
    return make_error(ErrorKind::invalid_input, "has no \"threshold\"", where);
  }
  auto parsed = threshold_of(*threshold, where + ".threshold");
  if (!parsed) return parsed.error();
  out.threshold = parsed.value();
  const auto labels = value.find("labels");
  if (labels == value.end()) return out;
  if (!labels->is_object()) {
    return make_error(ErrorKind::invalid_input, "must be an object", where + ".labels");
  }
  for (const auto& item : labels->items()) {
    auto label = threshold_of(item.value(), where + ".labels." + item.key());
    if (!label) return label.error();
    out.labels[item.key()] = label.value();
  }
  return out;
}

std::string text_field(const detail::Json& root, const char* name) {
  const auto it = root.find(name);
  return it != root.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

double trusted_probability(const Answer& answer) noexcept {
  if (const auto* n = answer.yes_no()) return std::max(n->p_true, 1.0 - n->p_true);
  return answer.winner_probability();
}

Result<Policy> Policy::parse(std::string_view text, const std::string& where) {
  auto parsed = clef::parse_json(text, "the policy");
  if (!parsed) {
    Error error = parsed.error();
    error.where = where + ": " + error.where;
    return error;
  }
  const detail::Json& root = parsed.value();
  if (!root.is_object() || text_field(root, "schema") != policy_schema) {
    return make_error(ErrorKind::invalid_input,
                      std::string("not a policy file (its \"schema\" is not \"") + policy_schema +
                          "\"; `clef eval --fit-thresholds --policy-out FILE` writes one)",
                      where);
  }
  Policy policy;
  policy.model = text_field(root, "model");
  if (policy.model.empty()) {
    return make_error(ErrorKind::invalid_input,
                      "has no \"model\" string: a policy names the model its thresholds were "
                      "measured on",
                      where);
  }
  policy.dataset_sha256 = text_field(root, "dataset_sha256");
  policy.questions_sha256 = text_field(root, "questions_sha256");
  const auto target = root.find("target_precision");
  if (target != root.end() && target->is_number()) policy.target_precision = target->get<double>();
  const auto questions = root.find("questions");
  if (questions == root.end() || !questions->is_object()) {
    return make_error(ErrorKind::invalid_input, "has no \"questions\" object", where);
  }
  for (const auto& item : questions->items()) {
    auto question = question_policy(item.value(), where + ": questions." + item.key());
    if (!question) return question.error();
    policy.questions[item.key()] = std::move(question).value();
  }
  return policy;
}

std::string Policy::to_json() const {
  nlohmann::json root;  // std::map objects: sorted keys
  root["schema"] = policy_schema;
  root["model"] = model;
  root["target_precision"] = target_precision;
  root["dataset_sha256"] = dataset_sha256;
  root["questions_sha256"] = questions_sha256;
  root["questions"] = nlohmann::json::object();
  auto as_json = [](const std::optional<double>& t) { return t ? nlohmann::json(*t) : nullptr; };
  for (const auto& [name, question] : questions) {
    nlohmann::json entry = {{"threshold", as_json(question.threshold)}};
    if (!question.labels.empty()) {
      entry["labels"] = nlohmann::json::object();
      for (const auto& [label, t] : question.labels) entry["labels"][label] = as_json(t);
    }
    root["questions"][name] = std::move(entry);
  }
  return root.dump(2) + "\n";
}

Status Policy::check(const std::vector<Question>& asked, const std::string& model_name) const {
  auto digest = clef::questions_sha256(asked);
  if (!digest) return digest.error();
  if (digest.value() != questions_sha256) {
    return make_error(ErrorKind::invalid_input,
                      "the policy was fitted for other questions (its questions_sha256 differs): "
                      "fit it again with these questions",
                      "policy");
  }
  if (model.empty() || model != model_name) {
    return make_error(ErrorKind::invalid_input,
                      "the policy was fitted for model \"" + model + "\", not \"" + model_name +
                          "\": a threshold holds only for the model it was measured on",
                      "policy");
  }
  // Past the digest, a name or label that does not fit was written by hand: a typo that would
  // leave answers unchecked.
  for (const auto& entry : questions) {
    const std::string& name = entry.first;  // a structured binding cannot be captured in C++17
    const auto question =
        std::find_if(asked.begin(), asked.end(), [&](const Question& q) { return q.name == name; });
    if (question == asked.end()) {
      return make_error(ErrorKind::invalid_input,
                        "the policy has thresholds for \"" + name + "\", which is not asked",
                        "policy: questions." + name);
    }
    for (const auto& labelled : entry.second.labels) {
      const std::string& label = labelled.first;
      if (question->type != QuestionType::choice) {
        return make_error(ErrorKind::invalid_input,
                          "\"" + name +
                              "\" is not a choice question: its answers have no label "
                              "of their own to hold to a threshold",
                          "policy: questions." + name + ".labels");
      }
      const bool known =
          std::any_of(question->options.begin(), question->options.end(),
                      [&](const ChoiceOption& option) { return option.label == label; });
      if (!known) {
        return make_error(ErrorKind::invalid_input, "\"" + label + "\" is not an option of " + name,
                          "policy: questions." + name + ".labels." + label);
      }
    }
  }
  return {};
}

std::vector<std::string> Policy::uncovered(const std::vector<Question>& asked) const {
  std::vector<std::string> out;
  for (const auto& question : asked) {
    if (questions.find(question.name) == questions.end()) out.push_back(question.name);
  }
  return out;
}

std::size_t Policy::apply(Decision& decision) const {
  std::size_t abstained = 0;
  for (Answer& answer : decision.answers) {
    const auto rule = questions.find(answer.question);
    if (rule == questions.end() || !answer.ok()) continue;
    std::optional<double> threshold = rule->second.threshold;
    if (const auto* c = answer.choice()) {
      const auto label = rule->second.labels.find(c->choice);
      if (label != rule->second.labels.end()) threshold = label->second;
    }
    const double probability = trusted_probability(answer);
    if (threshold && probability >= *threshold) continue;
    answer.status = AnswerStatus::abstained;
    answer.threshold = threshold;
    answer.problem =
        threshold ? "below the policy's threshold" : "the policy trusts no answer here";
    ++abstained;
  }
  return abstained;
}

}  // namespace clef
