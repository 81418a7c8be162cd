// The implementation of eval_report.hpp: clef eval's report.
#include "eval/eval_report.hpp"
#include "clef/json.hpp"

#include <cmath>

#include "clef/metrics.hpp"

namespace clef::cli {
namespace {

using Json = nlohmann::json;  // std::map objects: sorted keys

constexpr const char* no_answer_key = "(no answer)";

/// A failure's message in one line of a summary: a results file may hold any text at any length.
std::string shortened(const std::string& message) {
  constexpr std::size_t limit = 200;
  if (message.size() <= limit) return message;
  std::size_t cut = limit;
  while (cut > 0 && (static_cast<unsigned char>(message[cut]) & 0xC0) == 0x80) --cut;
  return message.substr(0, cut) + "…";
}

/// An undefined metric (a zero denominator) is null: no number a gate could mistake for one.
Json interval(const std::optional<metrics::Interval>& value) {
  if (!value) return Json();
  return {{"value", value->value}, {"low", value->low}, {"high", value->high}};
}

Json number(const std::optional<double>& value) {
  return value ? Json(*value) : Json();
}

Json class_json(const metrics::ClassScores& scores) {
  return {{"precision", interval(metrics::wilson(scores.correct, scores.predicted))},
          {"recall", interval(metrics::wilson(scores.correct, scores.support))},
          {"f1", scores.f1},
          {"support", scores.support},
          {"predicted", scores.predicted}};
}

Json question_json(const QuestionEvaluation& e) {
  Json out;
  out["type"] = to_string(e.type);
  out["n"] = e.n;
  out["skipped"] = e.skipped;
  out["answered"] = e.answered;
  out["coverage"] = interval(e.coverage);
  out["accuracy"] = interval(e.accuracy);
  out["accuracy_answered"] = interval(e.accuracy_answered);
  out["macro_f1"] = number(e.macro_f1);
  out["brier"] = interval(e.brier);
  out["log_loss"] = interval(e.log_loss);
  out["ece"] = number(e.ece);
  out["ece_noise_floor"] = number(e.ece_noise_floor);
  out["reliability"] = Json::array();
  for (const auto& bin : e.reliability) {
    out["reliability"].push_back({{"low", bin.low},
                                  {"high", bin.high},
                                  {"n", bin.n},
                                  {"confidence", number(bin.mean_confidence)},
                                  {"accuracy", number(bin.accuracy)}});
  }
  out["classes"] = Json::object();
  for (const auto& [label, scores] : e.classes) out["classes"][label] = class_json(scores);
  out["confusion"] = Json::object();
  for (const auto& [gold, row] : e.confusion.counts()) {
    for (const auto& [predicted, count] : row) {
      out["confusion"][gold][predicted.empty() ? no_answer_key : predicted] = count;
    }
  }
  if (e.type == QuestionType::yes_no) {
    out["auroc"] = number(e.auroc);
    // "yes" neither gold nor answered: its F1 is 0/0 as well.
    const auto yes = e.classes.find("yes");
    const Json positive = yes == e.classes.end()
                              ? Json{{"precision", nullptr}, {"recall", nullptr}, {"f1", nullptr}}
                              : class_json(yes->second);
    out["precision"] = positive["precision"];
    out["recall"] = positive["recall"];
    out["f1"] = positive["f1"];
  }
  if (e.type == QuestionType::score) {
    out["mae"] = interval(e.mae);
    out["within_1"] = interval(e.within_1);
    out["rps"] = interval(e.rps);
  }
  return out;
}

Json threshold_json(const FittedThreshold& t) {
  return {{"threshold", number(t.threshold)},
          {"fit",
           {{"n", t.fit_n},
            {"precision", number(t.fit_precision)},
            {"lower_bound", number(t.fit_lower_bound)},
            {"coverage", number(t.fit_coverage)}}},
          {"check",
           {{"n", t.check_n},
            {"precision", number(t.check_precision)},
            {"coverage", number(t.check_coverage)}}}};
}

/// Item i's answer to question q of `run`, or null.
const Answer* answer_of(const ModelRun& run, const EvalItem& item, const std::string& question) {
  const auto record = run.results.find(item.key);
  if (record == run.results.end() || !record->second.decision) return nullptr;
  return record->second.decision->answer(question);
}

std::vector<const Answer*> answers_of(const ModelRun& run, const EvalData& data,
                                      const std::string& question) {
  std::vector<const Answer*> out;
  for (const auto& item : data.items) out.push_back(answer_of(run, item, question));
  return out;
}

std::vector<std::string> gold_of(const EvalData& data, std::size_t question) {
  std::vector<std::string> out;
  for (const auto& item : data.items) out.push_back(item.gold[question]);
  return out;
}

/// Requests, latency and tokens of the items in DATA, and why the failed ones failed: per error
/// kind, how many and the first item's message (in DATA's order, so the bytes do not vary).
Json traffic_json(const ModelRun& run, const EvalData& data) {
  std::vector<double> latencies;
  std::int64_t input_tokens = 0, output_tokens = 0;
  std::size_t answered = 0, failed = 0, missing = 0;
  Json failures = Json::object();
  for (const auto& item : data.items) {
    const auto record = run.results.find(item.key);
    if (record == run.results.end()) {
      ++missing;
      continue;
    }
    if (!record->second.decision) {
      ++failed;
      const std::string& kind =
          record->second.error_kind.empty() ? "unknown" : record->second.error_kind;
      Json& entry = failures[kind];
      if (entry.is_null()) entry = {{"items", 0}, {"message", record->second.error}};
      entry["items"] = entry["items"].get<std::size_t>() + 1;
      continue;
    }
    ++answered;
    if (!record->second.sent) continue;
    latencies.push_back(record->second.latency_ms);
    input_tokens += record->second.decision->usage.input_tokens;
    output_tokens += record->second.decision->usage.output_tokens;
  }
  return {{"requests",
           {{"answered", answered},
            {"failed", failed},
            {"missing", missing},
            {"failures", std::move(failures)}}},
          {"latency_ms",
           {{"p50", number(metrics::quantile(latencies, 0.5))},
            {"p95", number(metrics::quantile(latencies, 0.95))},
            {"n", latencies.size()}}},
          {"tokens", {{"input", input_tokens}, {"output", output_tokens}}}};
}

/// Items whose every labelled question was answered right, over the items with any gold.
Json overall_json(const ModelRun& run, const EvalData& data,
                  const std::vector<QuestionEvaluation>& evaluations) {
  std::size_t scored = 0, all_right = 0;
  for (const auto& item : data.items) {
    bool any = false, right = true;
    for (std::size_t q = 0; q < data.questions.size(); ++q) {
      if (item.gold[q].empty()) continue;
      any = true;
      const Answer* answer = answer_of(run, item, data.questions[q].name);
      if (!answer || !answer->ok()) {
        right = false;
        continue;
      }
      std::string predicted = answer->winner();
      if (const auto* n = answer->yes_no()) predicted = n->p_true >= 0.5 ? "yes" : "no";
      right = right && predicted == item.gold[q];
    }
    scored += any;
    all_right += any && right;
  }
  // Over the questions with any gold answer: one without has no accuracy to average.
  double sum = 0;
  std::size_t questions = 0;
  for (const auto& e : evaluations) {
    if (!e.accuracy) continue;
    sum += e.accuracy->value;
    ++questions;
  }
  return {{"items", data.items.size()},
          {"all_correct", interval(metrics::wilson(all_right, scored))},
          {"mean_accuracy",
           number(questions ? std::optional<double>(sum / static_cast<double>(questions))
                            : std::nullopt)}};
}

Json comparison_json(const EvalData& data, const ModelRun& a, const ModelRun& b) {
  Json questions = Json::object();
  for (std::size_t q = 0; q < data.questions.size(); ++q) {
    const Question& question = data.questions[q];
    const ModelComparison c =
        compare_question(question, gold_of(data, q), answers_of(a, data, question.name),
                         answers_of(b, data, question.name));
    questions[question.name] = {{"n", c.n},
                                {"accuracy_difference", interval(c.accuracy_difference)},
                                {"only_a_right", c.only_a_right},
                                {"only_b_right", c.only_b_right},
                                {"mcnemar_p", c.mcnemar_p},
                                {"flip_rate", interval(c.flip_rate)}};
  }
  return {{"a", a.model}, {"b", b.model}, {"questions", questions}};
}

}  // namespace

Json build_report(const EvalData& data, const std::vector<ModelRun>& runs,
                  const ReportOptions& options) {
  Json report;
  report["schema"] = "clef-eval/1";
  report["dataset_sha256"] = data.dataset_sha256;
  report["questions_sha256"] = data.questions_sha256;
  report["items"] = data.items.size();
  report["models"] = Json::object();
  report["model_order"] = Json::array();
  for (const auto& run : runs) report["model_order"].push_back(run.model);
  std::vector<std::string> ids;
  for (const auto& item : data.items) ids.push_back(item.key);
  for (const auto& run : runs) {
    Json model = traffic_json(run, data);
    model["questions"] = Json::object();
    std::vector<QuestionEvaluation> evaluations;
    for (std::size_t q = 0; q < data.questions.size(); ++q) {
      const Question& question = data.questions[q];
      evaluations.push_back(
          evaluate_question(question, gold_of(data, q), answers_of(run, data, question.name)));
      model["questions"][question.name] = question_json(evaluations.back());
      if (!options.fit_thresholds) continue;
      const auto fitted =
          fit_thresholds(question, ids, gold_of(data, q), answers_of(run, data, question.name),
                         options.target_precision);
      Json& entry = model["thresholds"]["questions"][question.name];
      for (const auto& t : fitted) {
        if (t.label.empty())
          entry.update(threshold_json(t));
        else
          entry["labels"][t.label] = threshold_json(t);
      }
    }
    if (options.fit_thresholds) model["thresholds"]["target_precision"] = options.target_precision;
    model["overall"] = overall_json(run, data, evaluations);
    report["models"][run.model] = std::move(model);
  }
  if (runs.size() >= 2) {
    report["comparison"] = Json::array();
    for (std::size_t i = 1; i < runs.size(); ++i) {
      report["comparison"].push_back(comparison_json(data, runs[0], runs[i]));
    }
  }
  return report;
}

std::optional<double> report_number(const Json& object, const char* key) {
  if (!object.is_object()) return std::nullopt;
  const auto it = object.find(key);
  if (it == object.end()) return std::nullopt;
  if (it->is_object()) return report_number(*it, "value");
  if (!it->is_number()) return std::nullopt;
  return it->get<double>();
}

std::vector<ComparisonRow> comparison_rows(const Json& report) {
  std::vector<ComparisonRow> rows;
  const auto comparisons = report.find("comparison");
  if (comparisons == report.end() || !comparisons->is_array()) return rows;
  for (const auto& c : *comparisons) {
    const auto questions = c.find("questions");
    if (questions == c.end() || !questions->is_object()) continue;
    for (const auto& [question, q] : questions->items()) {
      if (!q.is_object()) continue;
      ComparisonRow row;
      row.a = c.value("a", "");
      row.b = c.value("b", "");
      row.question = question;
      const auto d = q.find("accuracy_difference");
      if (d != q.end()) {
        row.difference = report_number(*d, "value");
        row.low = report_number(*d, "low");
        row.high = report_number(*d, "high");
      }
      row.mcnemar_p = report_number(q, "mcnemar_p");
      row.flip_rate = report_number(q, "flip_rate");
      row.only_a_right = q.value("only_a_right", std::size_t{0});
      row.only_b_right = q.value("only_b_right", std::size_t{0});
      rows.push_back(std::move(row));
    }
  }
  return rows;
}

std::string failure_summary(const Json& model) {
  const auto requests = model.find("requests");
  if (requests == model.end() || !requests->is_object()) return {};
  const std::size_t answered = requests->value("answered", std::size_t{0});
  const std::size_t failed = requests->value("failed", std::size_t{0});
  const std::size_t missing = requests->value("missing", std::size_t{0});
  const std::string items = std::to_string(answered + failed + missing);
  std::string out;
  if (failed > 0) {
    out = std::to_string(failed) + " of " + items + " items failed:";
    const auto kinds = requests->find("failures");
    if (kinds != requests->end() && kinds->is_object()) {
      std::string sep = " ";
      for (const auto& [kind, entry] : kinds->items()) {
        out += sep + kind + " " + std::to_string(entry.value("items", std::size_t{0})) + " (" +
               shortened(entry.value("message", std::string())) + ")";
        sep = ", ";
      }
    }
  }
  if (missing > 0) {
    out += (out.empty() ? "" : "; ") + std::to_string(missing) + " of " + items +
           " items have no result in the results file";
  }
  return out;
}

std::vector<std::string> model_order(const Json& report) {
  std::vector<std::string> out;
  const auto order = report.find("model_order");
  const auto models = report.find("models");
  if (models == report.end() || !models->is_object()) return out;
  if (order != report.end() && order->is_array()) {
    for (const auto& name : *order) {
      if (name.is_string() && models->contains(name.get<std::string>()))
        out.push_back(name.get<std::string>());
    }
  }
  if (out.size() == models->size()) return out;
  out.clear();
  for (const auto& item : models->items()) out.push_back(item.key());
  return out;
}

std::string report_text(const Json& report) {
  return dump_json(report, 2) + "\n";
}

}  // namespace clef::cli
