// The implementation of output_json.hpp: the JSON clef prints.
#include "output_json.hpp"

namespace clef::cli {

using Json = nlohmann::ordered_json;

Json answer_json(const Answer& answer) {
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
    Json p = Json::object();
    for (const auto& option : c->probabilities) p[option.label] = option.probability;
    out["probabilities"] = p;
    if (c->server_confidence) out["server_confidence"] = *c->server_confidence;
  } else if (const auto* n = answer.yes_no()) {
    out["p_true"] = n->p_true;
  } else if (const auto* s = answer.score()) {
    out["level"] = s->most_likely_level;
    out["score"] = s->score;
    Json p = Json::object();
    for (std::size_t i = 0; i < s->probabilities.size(); ++i)
      p[std::to_string(i)] = s->probabilities[i];
    out["probabilities"] = p;
    if (s->server_confidence) out["server_confidence"] = *s->server_confidence;
  }
  if (answer.renormalized) out["renormalized"] = true;
  return out;
}

bool all_answered(const Decision& decision) {
  for (const auto& answer : decision.answers) {
    if (!answer.ok() && answer.status != AnswerStatus::abstained) return false;
  }
  return true;
}

Json decision_json(const Decision& decision) {
  Json out;
  out["model"] = decision.model;
  out["usage"] = {{"input_tokens", decision.usage.input_tokens},
                  {"output_tokens", decision.usage.output_tokens}};
  out["request_id"] = decision.request_id.empty() ? Json() : Json(decision.request_id);
  Json answers = Json::object();
  for (const auto& answer : decision.answers) answers[answer.question] = answer_json(answer);
  out["answers"] = answers;
  if (decision.cached) out["cached"] = true;  // only then: a live answer's bytes never change
  return out;
}

Json error_json(const Error& error) {
  Json out;
  out["kind"] = to_string(error.kind);
  out["status"] = error.http_status == 0 ? Json() : Json(error.http_status);
  out["message"] = error.message;
  if (!error.server_message.empty()) out["server_message"] = error.server_message;
  if (!error.server_code.empty()) out["server_code"] = error.server_code;
  if (!error.request_id.empty()) out["request_id"] = error.request_id;
  if (!error.where.empty()) out["where"] = error.where;
  return out;
}

}  // namespace clef::cli
