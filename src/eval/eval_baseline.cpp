// The implementation of eval_gates.hpp, its baselines: a clef-eval/1 report from an earlier run
// checked and compared with this run's, metric by metric, within tolerances.
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "clef/eval_gates.hpp"
#include "eval/metric_table.hpp"
#include "eval/report_json.hpp"

namespace clef {
namespace {

using detail::SortedJson;
using namespace detail;

Error bad_baseline(const std::string& why) {
  return make_error(ErrorKind::invalid_input, "the baseline " + why, "--baseline");
}

}  // namespace

namespace {

/// Why a baseline metric is not a metric, or "" when it is one.
std::string metric_shape_problem(const SortedJson& value, bool interval) {
  if (value.is_null()) return {};
  if (!interval) return value.is_number() ? std::string() : "is not a number or null";
  if (!value.is_object()) return "is not an interval {value, low, high} or null";
  for (const char* bound : {"value", "low", "high"}) {
    const SortedJson* part = member(value, bound);
    if (!part || !part->is_number()) {
      return std::string("is an interval without a number \"") + bound + "\"";
    }
  }
  return {};
}

Status check_question(const SortedJson& question, const std::string& where) {
  if (!question.is_object()) return bad_baseline(where + " is not an object");
  const std::string type = text_of(question, "type");
  if (type != "choice" && type != "noul" && type != "score" && type != "box") {
    return bad_baseline(where + ".type is not choice, noul, score or box");
  }
  for (const auto& metric : compared_metrics) {
    if (!applies(metric, type)) continue;
    const SortedJson* value = member(question, metric.name);
    if (!value) return bad_baseline(where + " has no \"" + metric.name + "\"");
    const std::string problem = metric_shape_problem(*value, metric.interval);
    if (!problem.empty()) return bad_baseline(where + "." + metric.name + " " + problem);
  }
  return {};
}

}  // namespace

namespace {

Status check_baseline(const SortedJson& baseline, const std::string& dataset_sha256,
                      const std::string& questions_sha256) {
  if (!baseline.is_object() || text_of(baseline, "schema") != "clef-eval/1") {
    return bad_baseline("is not a clef-eval/1 report (its \"schema\" is not \"clef-eval/1\")");
  }
  auto same = [&](const char* hash, const std::string& expected, const char* what) -> Status {
    const SortedJson* value = member(baseline, hash);
    if (!value || !value->is_string()) {
      return bad_baseline(std::string("has no \"") + hash + "\" string");
    }
    if (value->get<std::string>() != expected) {
      return bad_baseline(std::string("was measured on ") + what + " (its " + hash +
                          " differs): compare like with like");
    }
    return {};
  };
  if (auto status = same("dataset_sha256", dataset_sha256, "other data"); !status) return status;
  if (auto status = same("questions_sha256", questions_sha256, "other questions"); !status) {
    return status;
  }
  const SortedJson* models = member(baseline, "models");
  if (!models || !models->is_object()) return bad_baseline("has no \"models\" object");
  if (models->empty()) return bad_baseline("has no model in \"models\"");
  for (const auto& [name, model] : models->items()) {
    const std::string where = "models." + name;
    if (!model.is_object()) return bad_baseline(where + " is not an object");
    const SortedJson* questions = member(model, "questions");
    if (!questions || !questions->is_object()) {
      return bad_baseline(where + " has no \"questions\" object");
    }
    if (questions->empty()) {
      return bad_baseline(where + ".questions is empty (a report has every labelled question)");
    }
    for (const auto& [question, entry] : questions->items()) {
      if (auto status = check_question(entry, where + ".questions." + question); !status) {
        return status;
      }
    }
  }
  return {};
}

/// How far `metric` may get worse: its own tolerance, else the one for every metric, else 0.
double tolerance_of(const std::map<std::string, double>& tolerances, const std::string& metric) {
  auto it = tolerances.find(metric);
  if (it == tolerances.end()) it = tolerances.find("*");
  return it == tolerances.end() ? 0.0 : it->second;
}

/// The compared metrics of one question of `model`, `then` in the baseline and `now` in this
/// run (both of the same type), into `out`.
void compare_question(const ModelMetrics& model, const std::string& question,
                      const MetricScope& then, const MetricScope& now,
                      const std::map<std::string, double>& tolerances, BaselineComparison& out) {
  const std::string who = model.model + ": " + question;
  for (const auto& metric : compared_metrics) {
    if (!applies(metric, now.type)) continue;
    const std::optional<double> a = then.value(metric.name);
    const std::optional<double> b = now.value(metric.name);
    const std::string name = who + "." + metric.name;
    if (!a && !b) {
      out.notes.push_back(name + " is undefined in both reports: not compared");
      continue;
    }
    if (!a) {
      out.notes.push_back(name + " was undefined in the baseline (now " + number(*b) +
                          "): not compared");
      continue;
    }
    ++out.compared;
    if (!b) {
      out.drops.push_back(name + " went from " + number(*a) + " to undefined (" +
                          undefined_reason(model, question, metric.name, "") + ")");
      continue;
    }
    const double worse = metric.higher_is_better ? *a - *b : *b - *a;
    const double allowed = tolerance_of(tolerances, metric.name);
    if (worse > allowed + 1e-12) {
      out.drops.push_back(name + " went from " + number(*a) + " to " + number(*b) + " (tolerance " +
                          number(allowed) + ")");
    }
  }
}

const ModelMetrics* model_named(const std::vector<ModelMetrics>& table, const std::string& name) {
  for (const auto& model : table) {
    if (model.model == name) return &model;
  }
  return nullptr;
}

}  // namespace

Result<EvalBaseline> EvalBaseline::from_json(const nlohmann::ordered_json& document,
                                             const std::string& dataset_sha256,
                                             const std::string& questions_sha256) {
  // Sorted objects, as the report's own JSON form is: both sides are read the same way.
  SortedJson sorted(document);
  if (auto status = check_baseline(sorted, dataset_sha256, questions_sha256); !status) {
    return status.error();
  }
  return EvalBaseline(std::make_shared<const SortedJson>(std::move(sorted)));
}

Result<BaselineComparison> compare_to_baseline(const EvalReport& typed, const EvalBaseline& checked,
                                               const std::map<std::string, double>& tolerances) {
  const SortedJson report = to_json(typed);
  const SortedJson& baseline = checked.document();
  if (auto status = check_baseline(baseline, text_of(report, "dataset_sha256"),
                                   text_of(report, "questions_sha256"));
      !status) {
    return status.error();
  }
  BaselineComparison out;
  const std::vector<ModelMetrics> then_table = metric_table(baseline);
  const SortedJson* models = member(report, "models");
  if (!models || !models->is_object()) return bad_baseline("has nothing to compare with");
  const std::vector<ModelMetrics> now_table = metric_table(report);
  for (const ModelMetrics& model : now_table) {
    const ModelMetrics* old_model = model_named(then_table, model.model);
    if (!old_model) {
      out.notes.push_back("model " + model.model + " is not in the baseline: not compared");
      continue;
    }
    for (const auto& [question, now] : model.questions) {
      const auto then = old_model->questions.find(question);
      const std::string who = model.model + ": " + question;
      if (then == old_model->questions.end()) {
        out.notes.push_back(who + " is not in the baseline: not compared");
        continue;
      }
      if (then->second.type != now.type) {
        return bad_baseline("has " + question + " as a " + then->second.type +
                            " question, this run as a " + now.type + " (models." + model.model +
                            ".questions." + question + ".type)");
      }
      compare_question(model, question, then->second, now, tolerances, out);
    }
  }
  if (out.compared == 0) {
    std::string why = "and this run have no metric defined in both";
    if (!out.notes.empty()) why += " (" + out.notes.front() + ")";
    return bad_baseline(why + ": a comparison of nothing proves nothing");
  }
  return out;
}

}  // namespace clef
