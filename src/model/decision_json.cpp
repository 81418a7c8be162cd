// The implementation of clef/decision_json.hpp: clef's JSON for a Decision and an Error, both
// ways.
#include "clef/decision_json.hpp"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <string>

#include "model/box_answer.hpp"
#include "util/json_text.hpp"

namespace clef {
namespace {

using Json = nlohmann::ordered_json;

// ---- reading: every accessor checks the type first, nothing throws -----------------------------

std::optional<double> probability_at(const Json& object, const std::string& key) {
  const auto it = object.find(key);
  if (it == object.end() || !it->is_number()) return std::nullopt;
  const double p = it->get<double>();
  if (!(p >= 0 && p <= 1)) return std::nullopt;
  return p;
}

double number_or(const Json& object, const char* key, double fallback) {
  return detail::number_field(object, key).value_or(fallback);
}

std::string string_or(const Json& object, const char* key) {
  const auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

Answer invalid(Answer answer, std::string problem) {
  answer.status = AnswerStatus::invalid;
  answer.problem = std::move(problem);
  answer.value = std::monostate();
  return answer;
}

/// Probabilities in the question's order, from the "probabilities" object under `keys`.
std::optional<std::vector<double>> probabilities(const Json& answer,
                                                 const std::vector<std::string>& keys) {
  const auto it = answer.find("probabilities");
  // Exactly the question's options: an answer with another option was asked another question.
  if (it == answer.end() || !it->is_object() || it->size() != keys.size()) return std::nullopt;
  std::vector<double> out;
  for (const auto& key : keys) {
    auto p = probability_at(*it, key);
    if (!p) return std::nullopt;
    out.push_back(*p);
  }
  return out;
}

AnswerStatus status_named(const std::string& status) {
  if (status == "ok") return AnswerStatus::ok;
  if (status == "abstained") return AnswerStatus::abstained;
  if (status == "refused") return AnswerStatus::refused;
  if (status == "wrong_type") return AnswerStatus::wrong_type;
  if (status == "missing") return AnswerStatus::missing;
  return AnswerStatus::invalid;
}

YesNoAnswer yes_no_from(const Json& json, double p_true) {
  YesNoAnswer yes_no;
  yes_no.p_true = p_true;
  const std::string winner = string_or(json, "winner");
  yes_no.verdict = winner == "yes"       ? Verdict::yes
                   : winner == "no"      ? Verdict::no
                   : winner == "unknown" ? Verdict::unknown
                   : p_true >= 0.5       ? Verdict::yes
                                         : Verdict::no;
  yes_no.confidence = number_or(json, "confidence", 0);
  return yes_no;
}

/// The value of a choice or score answer from its probabilities (`p`, in `keys`' order).
void set_ranked_value(Answer& answer, const Question& question, const Json& json,
                      const std::vector<std::string>& keys, const std::vector<double>& p) {
  // The winner is the first most likely option, as the client picks it; on a tie, the one the
  // line records (its options may have been sent in another order: clef eval --permute).
  auto best = static_cast<std::size_t>(std::max_element(p.begin(), p.end()) - p.begin());
  const std::string recorded = string_or(json, "winner");
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const std::string& label = question.type == QuestionType::choice ? keys[i] : question.levels[i];
    if (label == recorded && p[i] == p[best]) best = i;
  }
  const std::optional<double> server_confidence = detail::number_field(json, "server_confidence");
  if (question.type == QuestionType::choice) {
    ChoiceAnswer choice;
    choice.choice = keys[best];
    choice.probability = p[best];
    for (std::size_t i = 0; i < keys.size(); ++i) choice.probabilities.push_back({keys[i], p[i]});
    choice.server_confidence = server_confidence;
    choice.confidence = number_or(json, "confidence", 0);
    answer.value = std::move(choice);
    return;
  }
  ScoreAnswer score;
  score.probabilities = p;
  score.most_likely_level = static_cast<int>(best);
  score.most_likely_label = question.levels[best];
  score.labels = question.levels;
  double expected = 0;
  for (std::size_t i = 0; i < p.size(); ++i) expected += static_cast<double>(i) * p[i];
  score.score = number_or(json, "score", expected);  // as the server reported it, when written
  score.server_confidence = server_confidence;
  score.confidence = number_or(json, "confidence", 0);
  answer.value = std::move(score);
}

Answer answer_from(const Question& question, const Json& json) {
  Answer answer;
  answer.question = question.name;
  answer.asked = question.type;
  if (!json.is_object()) return invalid(answer, "the answer is not an object");
  answer.status = status_named(string_or(json, "status"));
  if (answer.status != AnswerStatus::ok && answer.status != AnswerStatus::abstained) {
    answer.problem = string_or(json, "problem");
    return answer;
  }
  if (string_or(json, "type") != to_string(question.type)) {
    return invalid(answer, "the answer's type is not the question's");
  }
  if (answer.status == AnswerStatus::abstained)
    answer.threshold = detail::number_field(json, "threshold");
  const auto renormalized = json.find("renormalized");
  answer.renormalized =
      renormalized != json.end() && renormalized->is_boolean() && renormalized->get<bool>();
  if (question.type == QuestionType::box) {
    BoxAnswer box;
    if (auto problem = detail::read_box(json, box); !problem.empty()) {
      return invalid(answer, problem);
    }
    answer.value = box;
    return answer;
  }
  if (question.type == QuestionType::yes_no) {
    auto p = probability_at(json, "p_true");
    if (!p) return invalid(answer, "no p_true in [0, 1]");
    answer.value = yes_no_from(json, *p);
    return answer;
  }
  std::vector<std::string> keys;
  if (question.type == QuestionType::choice) {
    for (const auto& option : question.options) keys.push_back(option.label);
  } else {
    for (std::size_t i = 0; i < question.levels.size(); ++i) keys.push_back(std::to_string(i));
  }
  auto p = probabilities(json, keys);
  if (!p || p->empty()) {
    return invalid(answer,
                   "probabilities missing, outside [0, 1] or not for the question's options");
  }
  set_ranked_value(answer, question, json, keys, *p);
  return answer;
}

Json probabilities_json(const ChoiceAnswer& choice) {
  Json p = Json::object();
  for (const auto& option : choice.probabilities) p[option.label] = option.probability;
  return p;
}

Json probabilities_json(const ScoreAnswer& score) {
  Json p = Json::object();
  for (std::size_t i = 0; i < score.probabilities.size(); ++i)
    p[std::to_string(i)] = score.probabilities[i];
  return p;
}

}  // namespace

Json to_json(const Answer& answer) {
  Json out;
  out["type"] = to_string(answer.asked);
  out["status"] = to_string(answer.status);
  if (!answer.has_value()) {
    out["problem"] = answer.problem;
    return out;
  }
  if (answer.status == AnswerStatus::abstained) {
    out["threshold"] = answer.threshold ? Json(*answer.threshold) : Json();
  }
  out["winner"] = answer.winner();
  out["probability"] = answer.winner_probability();
  out["confidence"] = answer.confidence();
  if (const auto* c = answer.choice()) {
    out["probabilities"] = probabilities_json(*c);
    if (c->server_confidence) out["server_confidence"] = *c->server_confidence;
  } else if (const auto* n = answer.yes_no()) {
    out["p_true"] = n->p_true;
  } else if (const auto* s = answer.score()) {
    out["level"] = s->most_likely_level;
    out["score"] = s->score;
    out["probabilities"] = probabilities_json(*s);
    if (s->server_confidence) out["server_confidence"] = *s->server_confidence;
  } else if (const auto* b = answer.box()) {
    out["box"] = {{"top", b->top}, {"bottom", b->bottom}, {"left", b->left}, {"right", b->right}};
  }
  if (answer.renormalized) out["renormalized"] = true;
  return out;
}

Json to_json(const Decision& decision) {
  Json out;
  out["model"] = decision.model;
  out["usage"] = {{"input_tokens", decision.usage.input_tokens},
                  {"output_tokens", decision.usage.output_tokens}};
  // Only servers that report a prompt cache say how much of the input it served.
  if (decision.usage.cached_input_tokens > 0) {
    out["usage"]["cached_input_tokens"] = decision.usage.cached_input_tokens;
  }
  out["request_id"] = decision.request_id.empty() ? Json() : Json(decision.request_id);
  Json answers = Json::object();
  for (const auto& answer : decision.answers) answers[answer.question] = to_json(answer);
  out["answers"] = answers;
  if (decision.cached) out["cached"] = true;  // only then: a live answer's bytes never change
  if (!decision.host.empty()) out["host"] = decision.host;  // only with several hosts
  out["cost"] = to_json(decision.cost);
  if (decision.gateway) {  // only through AI Gateway
    out["gateway"] = {
        {"cache_status",
         decision.gateway->cache_status.empty() ? Json() : Json(decision.gateway->cache_status)},
        {"log_id", decision.gateway->log_id.empty() ? Json() : Json(decision.gateway->log_id)}};
  }
  return out;
}

Json to_json(const Cost& cost) {
  // Unknown is null, never 0: a sum over lines must not take it for free.
  Json out = {{"usd", cost.usd ? Json(*cost.usd) : Json()}, {"source", to_string(cost.source)}};
  if (cost.neurons) out["neurons"] = *cost.neurons;
  if (cost.sent_usd) out["sent_usd"] = *cost.sent_usd;
  return out;
}

Cost cost_from_json(const Json& json) {
  Cost cost;
  if (!json.is_object()) return cost;
  const auto source = cost_source_from_string(string_or(json, "source"));
  const auto usd = json.find("usd");
  if (!source || *source == CostSource::unknown || usd == json.end() || !usd->is_number())
    return cost;
  const double dollars = usd->get<double>();
  if (!std::isfinite(dollars) || dollars < 0) return cost;
  cost.usd = dollars + 0.0;  // -0 is 0
  cost.source = *source;
  if (const auto neurons = json.find("neurons"); neurons != json.end() && neurons->is_number()) {
    const double count = neurons->get<double>();
    if (std::isfinite(count) && count >= 0) cost.neurons = count;
  }
  if (const auto sent = json.find("sent_usd"); sent != json.end() && sent->is_number()) {
    const double dollars_then = sent->get<double>();
    if (std::isfinite(dollars_then) && dollars_then >= 0) cost.sent_usd = dollars_then + 0.0;
  }
  return cost;
}

Json to_json(const Error& error) {
  Json out;
  out["kind"] = to_string(error.kind);
  out["status"] = error.http_status == 0 ? Json() : Json(error.http_status);
  out["message"] = error.message;
  if (!error.server_message.empty()) out["server_message"] = error.server_message;
  if (!error.server_code.empty()) out["server_code"] = error.server_code;
  if (!error.request_id.empty()) out["request_id"] = error.request_id;
  if (!error.where.empty()) out["where"] = error.where;
  if (!error.host.empty()) out["host"] = error.host;
  return out;
}

Decision decision_from_json(const Json& json, const std::vector<Question>& questions) {
  static const Json none = Json::object();
  const Json& line = json.is_object() ? json : none;
  Decision decision;
  decision.model = string_or(line, "model");
  decision.request_id = string_or(line, "request_id");
  const auto usage = line.find("usage");
  if (usage != line.end() && usage->is_object()) {
    decision.usage.input_tokens = static_cast<std::int64_t>(number_or(*usage, "input_tokens", 0));
    decision.usage.output_tokens = static_cast<std::int64_t>(number_or(*usage, "output_tokens", 0));
    decision.usage.cached_input_tokens =
        static_cast<std::int64_t>(number_or(*usage, "cached_input_tokens", 0));
  }
  const auto cached = line.find("cached");
  decision.cached = cached != line.end() && cached->is_boolean() && cached->get<bool>();
  if (const auto cost = line.find("cost"); cost != line.end())
    decision.cost = cost_from_json(*cost);
  decision.host = string_or(line, "host");
  if (const auto gateway = line.find("gateway"); gateway != line.end() && gateway->is_object()) {
    decision.gateway =
        GatewayReport{string_or(*gateway, "cache_status"), string_or(*gateway, "log_id")};
  }
  const auto answers = line.find("answers");
  for (const auto& question : questions) {
    const Json* answer = nullptr;
    if (answers != line.end() && answers->is_object()) {
      const auto it = answers->find(question.name);
      if (it != answers->end()) answer = &*it;
    }
    if (answer) {
      decision.answers.push_back(answer_from(question, *answer));
      continue;
    }
    Answer missing;
    missing.question = question.name;
    missing.asked = question.type;
    missing.problem = "the results have no answer for this question";
    decision.answers.push_back(std::move(missing));
  }
  return decision;
}

Error error_from_json(const Json& json) {
  static const Json none = Json::object();
  const Json& object = json.is_object() ? json : none;
  Error error;
  error.kind = error_kind_named(string_or(object, "kind")).value_or(ErrorKind::invalid_response);
  const auto status = detail::number_field(object, "status");
  if (status && *status >= 100 && *status <= 599) error.http_status = static_cast<int>(*status);
  error.message = string_or(object, "message");
  if (error.message.empty()) error.message = "failed";
  error.server_message = string_or(object, "server_message");
  error.server_code = string_or(object, "server_code");
  error.request_id = string_or(object, "request_id");
  error.where = string_or(object, "where");
  error.host = string_or(object, "host");
  return error;
}

}  // namespace clef
