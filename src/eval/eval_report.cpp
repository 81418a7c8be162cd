// The implementation of eval_report.hpp: the typed evaluation of models on a labelled set, and
// its clef-eval/1 JSON.
#include "clef/eval_report.hpp"

#include "eval/eval_probes.hpp"
#include "eval/report_json.hpp"

#include <nlohmann/json.hpp>

namespace clef {
namespace {

using detail::interval_json;
using detail::number_json;

using detail::SortedJson;

constexpr const char* no_answer_key = "(no answer)";

const ItemResult* result_of(const ModelResults& run, std::size_t item) {
  if (item >= run.items.size() || !run.items[item]) return nullptr;
  return &*run.items[item];
}

const Answer* answer_of(const ModelResults& run, std::size_t item, const std::string& question) {
  const ItemResult* result = result_of(run, item);
  return result && result->decision ? result->decision->answer(question) : nullptr;
}

std::vector<const Answer*> answers_of(const ModelResults& run, const LabelledSet& set,
                                      const std::string& question) {
  std::vector<const Answer*> out;
  for (std::size_t i = 0; i < set.items.size(); ++i) out.push_back(answer_of(run, i, question));
  return out;
}

std::vector<std::string> gold_of(const LabelledSet& set, std::size_t question) {
  std::vector<std::string> out;
  for (const auto& item : set.items) out.push_back(item.gold[question]);
  return out;
}

/// Per error kind, how many failed and the first item's message (in the set's order, so the
/// report's bytes do not vary with the order results arrived in).
ModelTraffic traffic_of(const ModelResults& run, const LabelledSet& set) {
  ModelTraffic traffic;
  std::vector<double> latencies;
  for (std::size_t i = 0; i < set.items.size(); ++i) {
    const ItemResult* result = result_of(run, i);
    if (!result) {
      ++traffic.missing;
      continue;
    }
    if (!result->decision) {
      ++traffic.failed;
      FailureCount& entry =
          traffic.failures[result->error_kind.empty() ? "unknown" : result->error_kind];
      if (entry.items++ == 0) entry.message = result->error;
      continue;
    }
    ++traffic.answered;
    if (!result->sent) continue;
    latencies.push_back(result->latency_ms);
    traffic.input_tokens += result->decision->usage.input_tokens;
    traffic.output_tokens += result->decision->usage.output_tokens;
  }
  traffic.latency_p50_ms = metrics::quantile(latencies, 0.5);
  traffic.latency_p95_ms = metrics::quantile(latencies, 0.95);
  traffic.latency_n = latencies.size();
  return traffic;
}

/// The label evaluate_question predicts from an answer.
std::string predicted_label(const Answer& answer) {
  if (const auto* yes_no = answer.yes_no()) return yes_no->p_true >= 0.5 ? "yes" : "no";
  return answer.winner();
}

/// Items with any gold answer, and of them the items whose every labelled question was
/// answered right.
struct AllRight {
  std::size_t scored = 0;
  std::size_t right = 0;
};

AllRight all_right_of(const ModelResults& run, const LabelledSet& set) {
  AllRight count;
  for (std::size_t i = 0; i < set.items.size(); ++i) {
    bool any = false, right = true;
    for (std::size_t q = 0; q < set.questions.size(); ++q) {
      if (set.items[i].gold[q].empty()) continue;
      any = true;
      const Answer* answer = answer_of(run, i, set.questions[q].name);
      right = right && answer && answer->ok() && predicted_label(*answer) == set.items[i].gold[q];
    }
    count.scored += any;
    count.right += any && right;
  }
  return count;
}

OverallScores overall_of(const ModelResults& run, const LabelledSet& set,
                         const std::vector<QuestionEvaluation>& evaluations) {
  const AllRight all = all_right_of(run, set);
  double sum = 0;
  std::size_t questions = 0;
  for (const auto& e : evaluations) {
    if (!e.accuracy) continue;
    sum += e.accuracy->value;
    ++questions;
  }
  OverallScores overall;
  overall.items = set.items.size();
  overall.all_correct = metrics::wilson(all.right, all.scored);
  if (questions) overall.mean_accuracy = sum / static_cast<double>(questions);
  return overall;
}

ModelCost cost_of(const ModelResults& run, const LabelledSet& set) {
  ModelCost cost;
  double total = 0;
  for (std::size_t i = 0; i < set.items.size(); ++i) {
    const ItemResult* result = result_of(run, i);
    if (!result || !result->decision || !result->sent) continue;
    const Cost& spent = result->decision->cost;
    if (spent.usd && spent.source != CostSource::cached) {
      total += *spent.usd;
      ++cost.known;
    } else {
      ++cost.unknown;
    }
  }
  if (cost.known == 0) return cost;
  cost.total_usd = total;
  cost.per_item = total / static_cast<double>(cost.known);
  cost.per_1000 = *cost.per_item * 1000.0;
  const std::size_t right = all_right_of(run, set).right;
  if (cost.unknown == 0 && right > 0) cost.per_correct = total / static_cast<double>(right);
  return cost;
}

ModelEvaluation evaluate_model(const LabelledSet& set, const ModelResults& run,
                               const std::vector<std::string>& ids, const EvalOptions& options) {
  ModelEvaluation model;
  model.model = run.model;
  model.traffic = traffic_of(run, set);
  model.cost = cost_of(run, set);
  for (std::size_t q = 0; q < set.questions.size(); ++q) {
    const Question& question = set.questions[q];
    const auto answers = answers_of(run, set, question.name);
    model.questions.push_back(evaluate_question(question, gold_of(set, q), answers));
    detail::add_probes(set, run, q, ids, model.questions.back());
    if (options.fit_thresholds) {
      model.thresholds.push_back(
          fit_thresholds(question, ids, gold_of(set, q), answers, options.target_precision));
    }
  }
  model.overall = overall_of(run, set, model.questions);
  return model;
}

// The JSON form.

SortedJson class_json(const metrics::ClassScores& scores) {
  return {{"precision", interval_json(metrics::wilson(scores.correct, scores.predicted))},
          {"recall", interval_json(metrics::wilson(scores.correct, scores.support))},
          {"f1", scores.f1},
          {"support", scores.support},
          {"predicted", scores.predicted}};
}

SortedJson reliability_json(const std::vector<metrics::CalibrationBin>& bins) {
  SortedJson out = SortedJson::array();
  for (const auto& bin : bins) {
    out.push_back({{"low", bin.low},
                   {"high", bin.high},
                   {"n", bin.n},
                   {"confidence", number_json(bin.mean_confidence)},
                   {"accuracy", number_json(bin.accuracy)}});
  }
  return out;
}

/// The metrics only one question type has.
void add_type_metrics(const QuestionEvaluation& e, SortedJson& out) {
  if (e.type == QuestionType::yes_no) {
    out["auroc"] = number_json(e.auroc);
    // "yes" neither gold nor answered: its F1 is 0/0 as well.
    const auto yes = e.classes.find("yes");
    const SortedJson positive =
        yes == e.classes.end()
            ? SortedJson{{"precision", nullptr}, {"recall", nullptr}, {"f1", nullptr}}
            : class_json(yes->second);
    out["precision"] = positive["precision"];
    out["recall"] = positive["recall"];
    out["f1"] = positive["f1"];
  }
  if (e.type == QuestionType::score) {
    out["mae"] = interval_json(e.mae);
    out["within_1"] = interval_json(e.within_1);
    out["rps"] = interval_json(e.rps);
  }
  if (e.type == QuestionType::box) {
    out["mean_iou"] = interval_json(e.mean_iou);
    out["iou_at_least_half"] = interval_json(e.iou_at_least_half);
  }
}

SortedJson question_json(const QuestionEvaluation& e) {
  SortedJson out;
  out["type"] = to_string(e.type);
  out["n"] = e.n;
  out["skipped"] = e.skipped;
  out["answered"] = e.answered;
  out["coverage"] = interval_json(e.coverage);
  out["accuracy"] = interval_json(e.accuracy);
  out["accuracy_answered"] = interval_json(e.accuracy_answered);
  out["macro_f1"] = number_json(e.macro_f1);
  out["brier"] = interval_json(e.brier);
  out["log_loss"] = interval_json(e.log_loss);
  out["ece"] = number_json(e.ece);
  out["ece_noise_floor"] = number_json(e.ece_noise_floor);
  out["reliability"] = reliability_json(e.reliability);
  out["classes"] = SortedJson::object();
  for (const auto& [label, scores] : e.classes) out["classes"][label] = class_json(scores);
  out["confusion"] = SortedJson::object();
  for (const auto& [gold, row] : e.confusion.counts()) {
    for (const auto& [predicted, count] : row) {
      out["confusion"][gold][predicted.empty() ? no_answer_key : predicted] = count;
    }
  }
  add_type_metrics(e, out);
  detail::add_probe_json(e, out);
  return out;
}

SortedJson threshold_json(const FittedThreshold& t) {
  return {{"threshold", number_json(t.threshold)},
          {"fit",
           {{"n", t.fit_n},
            {"precision", number_json(t.fit_precision)},
            {"lower_bound", number_json(t.fit_lower_bound)},
            {"coverage", number_json(t.fit_coverage)}}},
          {"check",
           {{"n", t.check_n},
            {"precision", number_json(t.check_precision)},
            {"coverage", number_json(t.check_coverage)}}}};
}

SortedJson traffic_json(const ModelTraffic& t) {
  SortedJson failures = SortedJson::object();
  for (const auto& [kind, count] : t.failures) {
    failures[kind] = {{"items", count.items}, {"message", count.message}};
  }
  return {{"requests",
           {{"answered", t.answered},
            {"failed", t.failed},
            {"missing", t.missing},
            {"failures", std::move(failures)}}},
          {"latency_ms",
           {{"p50", number_json(t.latency_p50_ms)},
            {"p95", number_json(t.latency_p95_ms)},
            {"n", t.latency_n}}},
          {"tokens", {{"input", t.input_tokens}, {"output", t.output_tokens}}}};
}

SortedJson model_json(const EvalReport& report, const ModelEvaluation& model) {
  SortedJson out = traffic_json(model.traffic);
  out["questions"] = SortedJson::object();
  for (std::size_t q = 0; q < model.questions.size(); ++q) {
    const std::string& name = model.questions[q].question;
    out["questions"][name] = question_json(model.questions[q]);
    if (q >= model.thresholds.size()) continue;
    SortedJson& entry = out["thresholds"]["questions"][name];
    for (const auto& t : model.thresholds[q]) {
      if (t.label.empty())
        entry.update(threshold_json(t));
      else
        entry["labels"][t.label] = threshold_json(t);
    }
  }
  if (report.target_precision) out["thresholds"]["target_precision"] = *report.target_precision;
  out["cost"] = {{"known", model.cost.known},
                 {"unknown", model.cost.unknown},
                 {"total_usd", number_json(model.cost.total_usd)},
                 {"per_item", number_json(model.cost.per_item)},
                 {"per_1000", number_json(model.cost.per_1000)},
                 {"per_correct", number_json(model.cost.per_correct)}};
  out["overall"] = {{"items", model.overall.items},
                    {"all_correct", interval_json(model.overall.all_correct)},
                    {"mean_accuracy", number_json(model.overall.mean_accuracy)}};
  return out;
}

SortedJson comparison_json(const EvalReport& report, const ModelPairComparison& pair) {
  SortedJson questions = SortedJson::object();
  for (std::size_t q = 0; q < pair.questions.size() && q < report.question_names.size(); ++q) {
    const ModelComparison& c = pair.questions[q];
    questions[report.question_names[q]] = {
        {"n", c.n},
        {"accuracy_difference", interval_json(c.accuracy_difference)},
        {"only_a_right", c.only_a_right},
        {"only_b_right", c.only_b_right},
        {"mcnemar_p", c.mcnemar_p},
        {"flip_rate", interval_json(c.flip_rate)}};
  }
  return {{"a", pair.a}, {"b", pair.b}, {"questions", questions}};
}

}  // namespace

EvalReport evaluate_models(const LabelledSet& set, const std::vector<ModelResults>& results,
                           const EvalOptions& options) {
  EvalReport report;
  report.dataset_sha256 = set.dataset_sha256;
  report.questions_sha256 = set.questions_sha256;
  report.items = set.items.size();
  for (const auto& question : set.questions) {
    report.question_names.push_back(question.name);
    report.question_types.push_back(question.type);
  }
  if (options.fit_thresholds) report.target_precision = options.target_precision;
  std::vector<std::string> ids;
  for (const auto& item : set.items) ids.push_back(item.id);
  for (const auto& run : results) report.models.push_back(evaluate_model(set, run, ids, options));
  for (std::size_t m = 1; m < results.size(); ++m) {
    ModelPairComparison pair{results[0].model, results[m].model, {}};
    for (std::size_t q = 0; q < set.questions.size(); ++q) {
      const Question& question = set.questions[q];
      pair.questions.push_back(compare_question(question, gold_of(set, q),
                                                answers_of(results[0], set, question.name),
                                                answers_of(results[m], set, question.name)));
    }
    report.comparisons.push_back(std::move(pair));
  }
  return report;
}

SortedJson to_json(const EvalReport& report) {
  SortedJson out;
  out["schema"] = "clef-eval/1";
  out["dataset_sha256"] = report.dataset_sha256;
  out["questions_sha256"] = report.questions_sha256;
  out["items"] = report.items;
  out["models"] = SortedJson::object();
  out["model_order"] = SortedJson::array();
  for (const auto& model : report.models) out["model_order"].push_back(model.model);
  for (const auto& model : report.models) out["models"][model.model] = model_json(report, model);
  if (!report.comparisons.empty()) {
    out["comparison"] = SortedJson::array();
    for (const auto& pair : report.comparisons)
      out["comparison"].push_back(comparison_json(report, pair));
  }
  return out;
}

Policy policy_of(const EvalReport& report, const ModelEvaluation& model) {
  Policy policy;
  policy.model = model.model;
  policy.target_precision = report.target_precision.value_or(0);
  policy.dataset_sha256 = report.dataset_sha256;
  policy.questions_sha256 = report.questions_sha256;
  for (std::size_t q = 0; q < model.thresholds.size() && q < report.question_names.size(); ++q) {
    QuestionPolicy question;
    for (const auto& t : model.thresholds[q]) {
      if (t.label.empty())
        question.threshold = t.threshold;
      else if (t.threshold)
        question.labels[t.label] = t.threshold;
    }
    policy.questions[report.question_names[q]] = std::move(question);
  }
  return policy;
}

}  // namespace clef
