// The implementation of drift.hpp: two runs over the same items compared with no labels.
#include "clef/drift.hpp"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "eval/answer_probability.hpp"
#include "eval/report_json.hpp"

namespace clef {
namespace {

using detail::holds;
using detail::id_json;
using detail::interval_json;
using detail::number_json;
using detail::probability_of;
using detail::SortedJson;

/// Counts one item answered in both runs into `drift`; adds |Δp| to `delta_sum`.
void count_pair(QuestionDrift& drift, const std::string& id, const Answer& a, const Answer& b,
                double& delta_sum) {
  const std::string winner_a = a.winner();
  const std::string winner_b = b.winner();
  ++drift.compared;
  ++drift.winners[winner_a].a;
  ++drift.winners[winner_b].b;
  const auto p_a = probability_of(a, winner_a);
  const auto p_b = probability_of(b, winner_a);
  delta_sum += p_a && p_b ? std::fabs(*p_b - *p_a) : 1.0;
  if (winner_a != winner_b) {
    drift.flips.push_back({id, winner_a, a.winner_probability(), winner_b, b.winner_probability()});
  }
}

std::optional<double> winner_divergence(const QuestionDrift& drift) {
  std::vector<double> p, q;
  for (const auto& [winner, count] : drift.winners) {
    p.push_back(static_cast<double>(count.a));
    q.push_back(static_cast<double>(count.b));
  }
  return jensen_shannon_divergence(p, q);
}

/// ½ KL(p ‖ m) in bits, over the outcomes where p is not 0.
double half_kl_to_mean(const std::vector<double>& p, const std::vector<double>& q) {
  double sum = 0;
  for (std::size_t k = 0; k < p.size(); ++k) {
    if (p[k] > 0) sum += p[k] * std::log2(p[k] / ((p[k] + q[k]) / 2));
  }
  return sum / 2;
}

SortedJson question_json(const QuestionDrift& q) {
  SortedJson winners = SortedJson::object();
  for (const auto& [winner, count] : q.winners) winners[winner] = {{"a", count.a}, {"b", count.b}};
  SortedJson flips = SortedJson::array();
  for (const auto& flip : q.flips) {
    flips.push_back({{"id", id_json(flip.id)},
                     {"winner_a", flip.winner_a},
                     {"probability_a", flip.probability_a},
                     {"winner_b", flip.winner_b},
                     {"probability_b", flip.probability_b}});
  }
  return {{"type", to_string(q.type)},
          {"compared", q.compared},
          {"only_a", q.only_a},
          {"only_b", q.only_b},
          {"agreement", interval_json(q.agreement)},
          {"js_divergence", number_json(q.js_divergence)},
          {"mean_abs_delta_p", number_json(q.mean_abs_delta_p)},
          {"winners", winners},
          {"flips", flips}};
}

/// The model every decision names, or "" when they name none or several.
std::string one_model(const std::vector<std::optional<Decision>>& decisions) {
  std::string model;
  for (const auto& decision : decisions) {
    if (!decision || decision->model.empty()) continue;
    if (!model.empty() && decision->model != model) return "";
    model = decision->model;
  }
  return model;
}

Error gate_error(const Requirement& r, const std::string& why) {
  return make_error(ErrorKind::invalid_input, "requirement \"" + r.text + "\": " + why,
                    "--require");
}

/// The value `r` reads, or an error when the comparison has no such question or metric; a
/// value that is nullopt is undefined.
Result<std::optional<double>> drift_value(const Requirement& r, const RunDrift& drift) {
  if (!r.label.empty()) return gate_error(r, "a comparison's metrics have no [LABEL]");
  const auto bounded = [&](const std::optional<metrics::Interval>& interval) {
    if (!interval) return std::optional<double>();
    if (r.bound == "lower") return std::optional<double>(interval->low);
    if (r.bound == "upper") return std::optional<double>(interval->high);
    return std::optional<double>(interval->value);
  };
  if (r.question == "overall") {
    if (r.metric != "agreement") return gate_error(r, "overall has only agreement");
    return bounded(drift.agreement);
  }
  for (const auto& q : drift.questions) {
    if (q.question != r.question) continue;
    if (r.metric == "agreement") return bounded(q.agreement);
    if (!r.bound.empty()) return gate_error(r, r.metric + " has no interval to bound");
    if (r.metric == "js_divergence") return q.js_divergence;
    if (r.metric == "mean_abs_delta_p") return q.mean_abs_delta_p;
    if (r.metric == "compared") return std::optional<double>(static_cast<double>(q.compared));
    // No flip among nothing compared proves nothing: undefined, so a gate on it fails.
    if (r.metric == "flips" && q.compared == 0) return std::optional<double>();
    if (r.metric == "flips") return std::optional<double>(static_cast<double>(q.flips.size()));
    return gate_error(r, "\"" + r.metric +
                             "\" is not a comparison metric (agreement, js_divergence, "
                             "mean_abs_delta_p, compared, flips)");
  }
  return gate_error(r, "the comparison has no question \"" + r.question + "\"");
}

}  // namespace

std::optional<double> jensen_shannon_divergence(const std::vector<double>& p,
                                                const std::vector<double>& q) {
  if (p.size() != q.size()) return std::nullopt;
  double sum_p = 0, sum_q = 0;
  for (std::size_t k = 0; k < p.size(); ++k) {
    if (!std::isfinite(p[k]) || !std::isfinite(q[k]) || p[k] < 0 || q[k] < 0) return std::nullopt;
    sum_p += p[k];
    sum_q += q[k];
  }
  if (!(sum_p > 0) || !(sum_q > 0) || !std::isfinite(sum_p) || !std::isfinite(sum_q))
    return std::nullopt;
  std::vector<double> np(p.size()), nq(q.size());
  for (std::size_t k = 0; k < p.size(); ++k) {
    np[k] = p[k] / sum_p;
    nq[k] = q[k] / sum_q;
  }
  // Rounding can leave a hair below 0 or above 1 for (near-)identical distributions.
  const double divergence = half_kl_to_mean(np, nq) + half_kl_to_mean(nq, np);
  return std::min(1.0, std::max(0.0, divergence));
}

QuestionDrift compare_answers(const Question& question, const std::vector<std::string>& ids,
                              const std::vector<const Answer*>& answers_a,
                              const std::vector<const Answer*>& answers_b) {
  QuestionDrift drift;
  drift.question = question.name;
  drift.type = question.type;
  if (question.type == QuestionType::box) return drift;
  double delta_sum = 0;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const Answer* a = detail::valued(answers_a, i);
    const Answer* b = detail::valued(answers_b, i);
    if (a && b) {
      count_pair(drift, ids[i], *a, *b, delta_sum);
    } else if (a) {
      ++drift.only_a;
    } else if (b) {
      ++drift.only_b;
    }
  }
  if (drift.compared == 0) return drift;
  drift.agreement = metrics::wilson(drift.compared - drift.flips.size(), drift.compared);
  drift.js_divergence = winner_divergence(drift);
  drift.mean_abs_delta_p = delta_sum / static_cast<double>(drift.compared);
  return drift;
}

RunDrift compare_runs(const std::vector<Question>& questions, const std::vector<std::string>& ids,
                      const std::vector<std::optional<Decision>>& a,
                      const std::vector<std::optional<Decision>>& b) {
  RunDrift drift;
  drift.model_a = one_model(a);
  drift.model_b = one_model(b);
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const bool in_a = i < a.size() && a[i], in_b = i < b.size() && b[i];
    drift.items_a += in_a;
    drift.items_b += in_b;
    drift.common += in_a && in_b;
  }
  std::vector<bool> everywhere(ids.size(), true), agreed(ids.size(), true);
  bool any = false;
  for (const auto& question : questions) {
    std::vector<const Answer*> answers_a, answers_b;
    for (std::size_t i = 0; i < ids.size(); ++i) {
      answers_a.push_back(i < a.size() && a[i] ? a[i]->answer(question.name) : nullptr);
      answers_b.push_back(i < b.size() && b[i] ? b[i]->answer(question.name) : nullptr);
    }
    drift.questions.push_back(compare_answers(question, ids, answers_a, answers_b));
    if (question.type == QuestionType::box) continue;
    any = true;
    for (std::size_t i = 0; i < ids.size(); ++i) {
      const Answer* x = detail::valued(answers_a, i);
      const Answer* y = detail::valued(answers_b, i);
      everywhere[i] = everywhere[i] && x && y;
      agreed[i] = agreed[i] && x && y && x->winner() == y->winner();
    }
  }
  std::size_t compared = 0, same = 0;
  for (std::size_t i = 0; any && i < ids.size(); ++i) {
    compared += everywhere[i];
    same += agreed[i];
  }
  if (compared > 0) drift.agreement = metrics::wilson(same, compared);
  return drift;
}

Result<std::vector<std::string>> failed_drift_requirements(
    const std::vector<Requirement>& requirements, const RunDrift& drift) {
  std::vector<std::string> failures;
  for (const auto& r : requirements) {
    auto value = drift_value(r, drift);
    if (!value) return value.error();
    if (!value.value()) {
      failures.push_back(r.text + " (" + r.question + "." + r.metric +
                         " is undefined: no item was answered in both runs)");
    } else if (!holds(*value.value(), r.op, r.limit)) {
      failures.push_back(r.text + " (it is " + detail::number(*value.value()) + ")");
    }
  }
  return failures;
}

SortedJson to_json(const RunDrift& drift) {
  SortedJson questions = SortedJson::object();
  SortedJson order = SortedJson::array();
  for (const auto& q : drift.questions) {
    questions[q.question] = question_json(q);
    order.push_back(q.question);
  }
  const auto run = [](const std::string& name, const std::string& model, const std::string& version,
                      std::size_t items) {
    return SortedJson{{"name", name},
                      {"model", model},
                      {"model_version", version.empty() ? SortedJson() : SortedJson(version)},
                      {"items", items}};
  };
  return {{"schema", "clef-diff/1"},
          {"a", run(drift.name_a, drift.model_a, drift.model_version_a, drift.items_a)},
          {"b", run(drift.name_b, drift.model_b, drift.model_version_b, drift.items_b)},
          {"common", drift.common},
          {"agreement", interval_json(drift.agreement)},
          {"questions", questions},
          {"question_order", order}};
}

}  // namespace clef
