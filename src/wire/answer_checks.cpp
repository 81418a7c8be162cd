// The implementation of answer_checks.hpp: what an answer's fields mean, once read.
#include "wire/answer_checks.hpp"

#include <cmath>

#include "wire/wire_response.hpp"

namespace clef::detail {
namespace {

/// Checks the sum, rescaling a rounded one; returns the problem or "".
std::string check_distribution(std::vector<double>& p, const ValidationOptions& v,
                               bool& renormalized) {
  double sum = 0;
  for (double x : p) sum += x;
  const double off = std::fabs(sum - 1.0);
  if (off <= v.sum_tolerance) return {};
  if (off <= v.renormalize_tolerance && sum > 0) {
    for (double& x : p) x /= sum;
    renormalized = true;
    return {};
  }
  return "probabilities sum to " + std::to_string(sum) + ", not 1";
}

std::size_t argmax(const std::vector<double>& p) {
  std::size_t best = 0;
  for (std::size_t i = 1; i < p.size(); ++i) {
    if (p[i] > p[best]) best = i;
  }
  return best;
}

}  // namespace

void mark(Answer& answer, AnswerStatus status, std::string problem) {
  answer.status = status;
  answer.problem = std::move(problem);
  answer.value = std::monostate{};
}

Answer answer_for(const Question& q) {
  Answer answer;
  answer.question = q.name;
  answer.asked = q.type;
  return answer;
}

Answer unanswered(const Question& q) {
  Answer answer = answer_for(q);
  mark(answer, AnswerStatus::missing, "the server sent no answer for this question");
  return answer;
}

bool is_probability(double p) {
  return p >= 0.0 && p <= 1.0 && std::isfinite(p);
}

void finish_choice(std::vector<double> p, SentChoice sent, std::optional<double> server_confidence,
                   const Question& q, const ValidationOptions& v, Answer& a) {
  const auto& options = q.options;
  // A named choice is checked against what the server sent, before any rescaling below.
  std::size_t named = options.size();
  if (sent.form == SentChoice::Form::text) {
    for (std::size_t i = 0; i < options.size(); ++i) {
      if (options[i].label == sent.text) named = i;
    }
  }
  const std::size_t top_as_sent = argmax(p);
  const double top_p_as_sent = top_as_sent < p.size() ? p[top_as_sent] : 0.0;
  const double named_p_as_sent = named < p.size() ? p[named] : 0.0;
  if (auto problem = check_distribution(p, v, a.renormalized); !problem.empty()) {
    return mark(a, AnswerStatus::invalid, problem);
  }
  const std::size_t best = argmax(p);
  ChoiceAnswer choice;
  choice.choice = options[best].label;
  if (sent.form == SentChoice::Form::not_text) {
    return mark(a, AnswerStatus::invalid, "\"choice\" is not a string");
  }
  if (sent.form == SentChoice::Form::text) {
    if (named == options.size()) {
      return mark(a, AnswerStatus::invalid,
                  "\"choice\" names unknown option \"" + std::string(sent.text) + "\"");
    }
    // A tie at the top may be broken either way by the server; anything below it is wrong.
    if (named_p_as_sent + 1e-9 < top_p_as_sent) {
      return mark(a, AnswerStatus::invalid,
                  "\"choice\" is \"" + std::string(sent.text) + "\" but \"" +
                      options[top_as_sent].label + "\" is more likely");
    }
    choice.choice = options[named].label;
    choice.probability = p[named];
  } else {
    choice.probability = p[best];
  }
  choice.probabilities.reserve(options.size());
  for (std::size_t i = 0; i < options.size(); ++i) {
    choice.probabilities.push_back({options[i].label, p[i]});
  }
  choice.server_confidence = server_confidence;
  choice.confidence = entropy_confidence(p);
  a.value = std::move(choice);
}

void finish_yes_no(std::optional<double> noul, const ValidationOptions& v, Answer& a) {
  if (!noul) return mark(a, AnswerStatus::invalid, "no numeric \"noul\" (P(true))");
  if (!is_probability(*noul)) {
    return mark(a, AnswerStatus::invalid, "noul is " + std::to_string(*noul) + ", not in [0, 1]");
  }
  YesNoAnswer answer;
  answer.p_true = *noul;
  answer.verdict = *noul >= v.verdict.yes_at_least ? Verdict::yes
                   : *noul <= v.verdict.no_at_most ? Verdict::no
                                                   : Verdict::unknown;
  answer.confidence = entropy_confidence({*noul, 1.0 - *noul});
  a.value = answer;
}

void finish_score(std::vector<double> p, std::optional<double> sent_score,
                  std::optional<double> server_confidence, const Question& q,
                  const ValidationOptions& v, Answer& a) {
  if (auto problem = check_distribution(p, v, a.renormalized); !problem.empty()) {
    return mark(a, AnswerStatus::invalid, problem);
  }
  double expected = 0;
  for (std::size_t i = 0; i < p.size(); ++i) expected += static_cast<double>(i) * p[i];
  ScoreAnswer score;
  score.score = expected;
  if (sent_score) {
    // Servers round both the score and the probabilities (3.99 with p4 = 1.0 was seen live).
    const double tolerance = 0.01 + 0.02 * static_cast<double>(p.size() - 1);
    if (std::fabs(*sent_score - expected) > tolerance) {
      return mark(a, AnswerStatus::invalid,
                  "score " + std::to_string(*sent_score) + " is not the expected level " +
                      std::to_string(expected));
    }
    score.score = *sent_score;
  }
  score.most_likely_level = static_cast<int>(argmax(p));
  score.probabilities = std::move(p);
  score.labels = q.levels;
  score.most_likely_label = q.levels[static_cast<std::size_t>(score.most_likely_level)];
  score.server_confidence = server_confidence;
  score.confidence = entropy_confidence(score.probabilities);
  a.value = std::move(score);
}

}  // namespace clef::detail
