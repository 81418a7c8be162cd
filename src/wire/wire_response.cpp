// The implementation of wire_response.hpp: a decision response object -> typed, validated answers.
#include "wire/wire_response.hpp"

#include <cmath>
#include <limits>
#include <set>

#include "model/box_answer.hpp"
#include "wire/answer_checks.hpp"
#include "wire/backend_wire.hpp"
#include "wire/cost.hpp"
#include "wire/http_errors.hpp"
#include "wire/openai_dialect.hpp"
#include "wire/quick_reply.hpp"

namespace clef::detail {
namespace {

std::string text_of(const Json& object, std::initializer_list<const char*> keys) {
  for (const char* key : keys) {
    auto it = object.find(key);
    if (it != object.end() && it->is_string()) return it->get<std::string>();
  }
  return {};
}

/// Reads probabilities keyed by `keys` from `answer_json`, or sets the answer invalid.
bool read_probabilities(const Json& answer_json, const std::vector<std::string>& keys,
                        Answer& answer, std::vector<double>& out) {
  auto it = answer_json.find("probabilities");
  if (it == answer_json.end() || !it->is_object()) {
    mark(answer, AnswerStatus::invalid, "no probabilities object");
    return false;
  }
  const std::set<std::string> expected(keys.begin(), keys.end());
  for (const auto& item : it->items()) {
    if (!expected.count(item.key())) {
      mark(answer, AnswerStatus::invalid, "probability for unknown option \"" + item.key() + "\"");
      return false;
    }
  }
  out.clear();
  for (const auto& key : keys) {
    auto p = it->find(key);
    if (p == it->end()) {
      mark(answer, AnswerStatus::invalid, "no probability for \"" + key + "\"");
      return false;
    }
    if (!p->is_number() || !is_probability(p->get<double>())) {
      mark(answer, AnswerStatus::invalid,
           "probability of \"" + key + "\" is " + clef::dump_json(*p) + ", not in [0, 1]");
      return false;
    }
    out.push_back(p->get<double>());
  }
  return true;
}

void parse_choice(const Json& json, const Question& q, const ValidationOptions& v, Answer& a) {
  std::vector<std::string> labels;
  for (const auto& option : q.options) labels.push_back(option.label);
  std::vector<double> p;
  if (!read_probabilities(json, labels, a, p)) return;
  SentChoice sent;
  if (auto it = json.find("choice"); it != json.end()) {
    sent.form = it->is_string() ? SentChoice::Form::text : SentChoice::Form::not_text;
    if (it->is_string()) sent.text = it->get_ref<const std::string&>();
  }
  finish_choice(std::move(p), sent, number_field(json, "confidence"), q, v, a);
}

void parse_score(const Json& json, const Question& q, const ValidationOptions& v, Answer& a) {
  std::vector<std::string> keys;
  for (std::size_t i = 0; i < q.levels.size(); ++i) keys.push_back(std::to_string(i));
  std::vector<double> p;
  if (!read_probabilities(json, keys, a, p)) return;
  finish_score(std::move(p), number_field(json, "score"), number_field(json, "confidence"), q, v,
               a);
}

/// A box as TypeSafe sends it: {"type": "box", "box": {"top", "bottom", "left", "right"},
/// "confidence"}. Geometry outside the image or inside out is refused, never clamped: a box drawn
/// from it would be somewhere the model did not say.
void parse_box(const Json& json, Answer& a) {
  BoxAnswer box;
  if (auto problem = read_box(json, box); !problem.empty()) {
    return mark(a, AnswerStatus::invalid, problem);
  }
  a.value = box;
}

Answer parse_answer(const Json& answers, std::optional<std::string_view> answers_text,
                    const Question& q, const ValidationOptions& v) {
  auto it = answers.find(q.name);
  if (it == answers.end() || it->is_null()) return unanswered(q);
  Answer a = answer_for(q);
  const auto sent = answers_text ? member_text(*answers_text, q.name) : std::nullopt;
  a.raw_json = sent ? std::string(*sent) : clef::dump_json(*it);
  if (!it->is_object()) {
    mark(a, AnswerStatus::invalid, "the answer is not an object");
    return a;
  }
  const std::string type = text_of(*it, {"type"});
  if (type == "refusal") {
    std::string why = text_of(*it, {"refusal", "message", "reason"});
    mark(a, AnswerStatus::refused, why.empty() ? "the model refused to answer" : why);
    return a;
  }
  if (type != to_string(q.type)) {
    mark(a, AnswerStatus::wrong_type,
         std::string("asked ") + to_string(q.type) + ", got " +
             (type.empty() ? "an answer without a type" : "\"" + type + "\""));
    return a;
  }
  a.status = AnswerStatus::ok;
  switch (q.type) {
    case QuestionType::choice:
      parse_choice(*it, q, v, a);
      break;
    case QuestionType::yes_no:
      finish_yes_no(number_field(*it, "noul"), v, a);
      break;
    case QuestionType::score:
      parse_score(*it, q, v, a);
      break;
    case QuestionType::box:
      parse_box(*it, a);
      break;
  }
  return a;
}

}  // namespace

double entropy_confidence(const std::vector<double>& probabilities) {
  if (probabilities.size() < 2) return 0;
  double entropy = 0;
  for (double p : probabilities) {
    if (p > 0) entropy -= p * std::log(p);
  }
  const double c = 1.0 - entropy / std::log(static_cast<double>(probabilities.size()));
  return c < 0 ? 0 : (c > 1 ? 1 : c);
}

std::int64_t token_count(double value) {
  if (!(value > 0)) return 0;  // also NaN
  if (value >= 9.2e18) return std::numeric_limits<std::int64_t>::max();
  return static_cast<std::int64_t>(value);
}

Result<Decision> parse_decision(const Json& body, std::string_view body_text,
                                const std::vector<Question>& questions,
                                const ValidationOptions& validation) {
  if (!body.is_object()) {
    return make_error(ErrorKind::invalid_response, "the response is not a JSON object", "$");
  }
  auto answers = body.find("answers");
  if (answers == body.end() || !answers->is_object()) {
    return make_error(ErrorKind::invalid_response, "the response has no \"answers\" object",
                      "answers");
  }
  Decision decision;
  decision.model = text_of(body, {"model"});
  if (auto usage = body.find("usage"); usage != body.end() && usage->is_object()) {
    decision.usage.input_tokens = token_count(number_field(*usage, "input_tokens").value_or(0));
    decision.usage.output_tokens = token_count(number_field(*usage, "output_tokens").value_or(0));
    if (auto details = usage->find("input_tokens_details");
        details != usage->end() && details->is_object()) {
      decision.usage.cached_input_tokens =
          token_count(number_field(*details, "cached_tokens").value_or(0));
    }
    read_body_cost(*usage, decision.cost);
  }
  const auto answers_text = member_text(body_text, "answers");
  decision.answers.reserve(questions.size());
  for (const auto& q : questions) {
    decision.answers.push_back(parse_answer(*answers, answers_text, q, validation));
  }
  return decision;
}

Result<Decision> read_openai_decision(const Json& body, const std::vector<Question>& questions,
                                      const ValidationOptions& validation) {
  std::vector<DialectProblem> problems;
  auto translated = openai_body_as_systemone(body, questions, problems);
  if (!translated) return translated.error();
  auto decision = parse_decision(translated.value(), {}, questions, validation);
  if (!decision) return decision.error();
  for (const auto& [question, problem] : problems) {
    for (auto& answer : decision->answers) {
      if (answer.question == question) mark(answer, AnswerStatus::invalid, problem);
    }
  }
  const auto sent = body.find("answers");  // an array: the translation checked
  for (std::size_t i = 0; i < sent->size() && i < decision->answers.size(); ++i) {
    decision->answers[i].raw_json = clef::dump_json((*sent)[i]);
  }
  return decision;
}

Error unusable_success(Error error, const Success& success) {
  error.http_status = success.response.status;
  error.request_id = request_id(success.response, success.secret);
  return error;
}

Result<Decision> read_system_one(const Success& success, std::string_view text) {
  auto decision = parse_decision(success.body, text, success.questions, success.validation);
  if (!decision) return unusable_success(decision.error(), success);
  decision->request_id = request_id(success.response);
  decision->raw_json = text.empty() ? clef::dump_json(success.body) : std::string(text);
  return decision;
}

Result<Decision> BackendWire::read_success(Success success) const {
  return read_system_one(success, success.response.body);
}

Result<Decision> read_decision(Backend backend, const HttpResponse& response,
                               const std::vector<Question>& questions,
                               const ValidationOptions& validation, const Secrets& secret) {
  const BackendWire& wire = wire_of(backend);
  if (wire.sends_bare_reply()) {
    if (auto decision = read_quick_reply(response.body, questions, validation)) {
      decision->request_id = request_id(response);
      return std::move(*decision);
    }
  }
  auto body = clef::parse_json(response.body, "the response body", ErrorKind::invalid_response);
  Success success{Json(), response, questions, validation, secret};
  if (!body) return unusable_success(body.error(), success);
  success.body = std::move(body).value();
  return wire.read_success(std::move(success));
}

}  // namespace clef::detail
