// append_json_members (decision_json.hpp): to_json(Decision)'s members as text, no JSON value.
#include "clef/decision_json.hpp"

#include <nlohmann/json.hpp>
#include <optional>

#include "clef/json.hpp"
#include "util/json_text.hpp"

namespace clef {
namespace detail {
namespace {

void append_key(std::string& out, const char* key) {
  out += '"';
  out += key;  // clef's own member names: nothing to escape
  out += "\":";
}

void append_member(std::string& out, const char* key, double value) {
  out += ',';
  append_key(out, key);
  append_json_number(out, value);
}

void append_member(std::string& out, const char* key, std::int64_t value) {
  out += ',';
  append_key(out, key);
  out += std::to_string(value);
}

void append_number_or_null(std::string& out, const std::optional<double>& value) {
  if (value)
    append_json_number(out, *value);
  else
    out += "null";
}

void append_text_or_null(std::string& out, const std::string& text) {
  if (text.empty())
    out += "null";
  else
    append_json_text(out, text);
}

/// True when two of `items` have the same `name_of`: a JSON object would keep one of them, so
/// the value's own writer decides (no answer clef makes has that; a hand-made Decision may).
/// Compared in place: this runs for every decision clef batch writes.
template <typename Items, typename NameOf>
bool repeats_a_name(const Items& items, NameOf name_of) {
  for (std::size_t i = 0; i < items.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      if (name_of(items[i]) == name_of(items[j])) return true;
    }
  }
  return false;
}

void append_probabilities(std::string& out, const ChoiceAnswer& choice) {
  out += ",\"probabilities\":{";
  for (std::size_t i = 0; i < choice.probabilities.size(); ++i) {
    if (i > 0) out += ',';
    append_json_text(out, choice.probabilities[i].label);
    out += ':';
    append_json_number(out, choice.probabilities[i].probability);
  }
  out += '}';
}

void append_probabilities(std::string& out, const ScoreAnswer& score) {
  out += ",\"probabilities\":{";
  for (std::size_t i = 0; i < score.probabilities.size(); ++i) {
    if (i > 0) out += ',';
    out += '"' + std::to_string(i) + "\":";
    append_json_number(out, score.probabilities[i]);
  }
  out += '}';
}

/// What to_json(answer) holds after its type, status and winner.
void append_value(std::string& out, const Answer& answer) {
  if (const auto* c = answer.choice()) {
    append_probabilities(out, *c);
    if (c->server_confidence) append_member(out, "server_confidence", *c->server_confidence);
  } else if (const auto* n = answer.yes_no()) {
    append_member(out, "p_true", n->p_true);
  } else if (const auto* s = answer.score()) {
    append_member(out, "level", static_cast<std::int64_t>(s->most_likely_level));
    append_member(out, "score", s->score);
    append_probabilities(out, *s);
    if (s->server_confidence) append_member(out, "server_confidence", *s->server_confidence);
  } else if (const auto* b = answer.box()) {
    out += ",\"box\":{\"top\":";
    append_json_number(out, b->top);
    append_member(out, "bottom", b->bottom);
    append_member(out, "left", b->left);
    append_member(out, "right", b->right);
    out += '}';
  }
}

bool has_repeated_label(const Answer& answer) {
  const auto* c = answer.choice();
  return c && repeats_a_name(c->probabilities,
                             [](const OptionProbability& option) -> const std::string& {
                               return option.label;
                             });
}

void append_answer(std::string& out, const Answer& answer) {
  if (has_repeated_label(answer)) {
    out += dump_json(to_json(answer));
    return;
  }
  out += "{\"type\":";
  append_json_text(out, to_string(answer.asked));
  out += ",\"status\":";
  append_json_text(out, to_string(answer.status));
  if (!answer.has_value()) {
    out += ",\"problem\":";
    append_json_text(out, answer.problem);
    out += '}';
    return;
  }
  if (answer.status == AnswerStatus::abstained) {
    out += ",\"threshold\":";
    append_number_or_null(out, answer.threshold);
  }
  out += ",\"winner\":";
  append_json_text(out, answer.winner());
  append_member(out, "probability", answer.winner_probability());
  append_member(out, "confidence", answer.confidence());
  append_value(out, answer);
  if (answer.renormalized) out += ",\"renormalized\":true";
  out += '}';
}

void append_cost(std::string& out, const Cost& cost) {
  out += ",\"cost\":{\"usd\":";
  append_number_or_null(out, cost.usd);
  out += ",\"source\":";
  append_json_text(out, to_string(cost.source));
  if (cost.neurons) append_member(out, "neurons", *cost.neurons);
  if (cost.sent_usd) append_member(out, "sent_usd", *cost.sent_usd);
  out += '}';
}

}  // namespace
}  // namespace detail

using detail::append_answer;
using detail::append_cost;
using detail::append_member;
using detail::append_text_or_null;
using detail::repeats_a_name;

void append_json_members(std::string& out, const Decision& decision) {
  if (repeats_a_name(decision.answers,
                     [](const Answer& answer) -> const std::string& { return answer.question; })) {
    const std::string whole = dump_json(to_json(decision));
    out.append(whole, 1, whole.size() - 2);
    return;
  }
  out += "\"model\":";
  append_json_text(out, decision.model);
  out += ",\"usage\":{\"input_tokens\":" + std::to_string(decision.usage.input_tokens);
  append_member(out, "output_tokens", decision.usage.output_tokens);
  if (decision.usage.cached_input_tokens > 0) {
    append_member(out, "cached_input_tokens", decision.usage.cached_input_tokens);
  }
  out += "},\"request_id\":";
  append_text_or_null(out, decision.request_id);
  out += ",\"answers\":{";
  for (std::size_t i = 0; i < decision.answers.size(); ++i) {
    if (i > 0) out += ',';
    append_json_text(out, decision.answers[i].question);
    out += ':';
    append_answer(out, decision.answers[i]);
  }
  out += '}';
  if (decision.cached) out += ",\"cached\":true";
  if (!decision.host.empty()) {
    out += ",\"host\":";
    append_json_text(out, decision.host);
  }
  append_cost(out, decision.cost);
  if (decision.gateway) {
    out += ",\"gateway\":{\"cache_status\":";
    append_text_or_null(out, decision.gateway->cache_status);
    out += ",\"log_id\":";
    append_text_or_null(out, decision.gateway->log_id);
    out += '}';
  }
}

}  // namespace clef
