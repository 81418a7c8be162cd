// clef: gates on an evaluation, for CI and for applications that gate themselves — requirements
// such as `team.accuracy >= 0.9` (clef eval's --require) and a comparison with an earlier report
// (--baseline). Both read the report's clef-eval/1 form, so a gate sees exactly the numbers the
// report file shows, and a gate never passes on a metric that is undefined (null in the report)
// or on a comparison of nothing.
//
//     auto gate = clef::parse_requirement("lower(refund.accuracy) >= 0.9");
//     clef::EvalReport report = clef::evaluate_models(clef::LabelledSet{}, {}, {});  // yours
//     auto failures = clef::failed_requirements({gate.value()}, report);
//     bool ship = failures && failures->empty();  // no model, an unknown question: errors
#pragma once

#include <map>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "clef/eval_report.hpp"
#include "clef/export.hpp"
#include "clef/result.hpp"

namespace clef {

/// One requirement: `[lower(|upper(]QUESTION.METRIC[[LABEL]][)] OP NUMBER`, OP one of >= > <=
/// < == !=. QUESTION may be `overall` (all_correct, mean_accuracy), `latency_ms` (p50, p95) or
/// `cost` (total_usd, per_item, per_1000, per_correct: ModelCost, in dollars);
/// METRIC is a name of the report's JSON form (accuracy, macro_f1, brier, auroc, …); LABEL picks
/// a class (precision, recall, f1, support). lower()/upper() read an interval's bound.
struct Requirement {
  std::string text;
  std::string bound;  ///< "", "lower" or "upper"
  std::string question;
  std::string metric;
  std::string label;
  std::string op;
  double limit = 0;
};

/// A malformed requirement (or a NUMBER no double holds, such as 1e400) is an invalid_input
/// error quoting it (where: "--require"). Read by hand in one pass: time linear in its length,
/// whatever it holds.
CLEF_API Result<Requirement> parse_requirement(const std::string& text);

/// Each requirement against every model of the report: the failures as sentences
/// ("clef-flash: team.accuracy >= 0.9 (it is 0.85)"). A metric that is undefined fails, with the
/// reason ("team.brier is undefined: no item was answered"). A requirement naming what the
/// report does not have (an unknown question, auroc of a choice question), or a report without
/// any model, is an error, not a failure.
CLEF_API Result<std::vector<std::string>> failed_requirements(
    const std::vector<Requirement>& requirements, const EvalReport& report);

/// Which probes a run makes: the position probe (--permute) and the repeat probe (--repeat).
struct ProbesRun {
  bool permuted = false;
  bool repeated = false;
};

/// The requirements checked against what any report of `set` has, before a model is asked: a
/// question that is not labelled, a metric its type does not have, a metric that is a list, are
/// the errors failed_requirements would give after the run, and so is a probe's metric
/// (position_*, self_agreement, repeat_*) when `probes` says its probe does not run. A class
/// (`team.recall[billing]`) exists once an item has it as gold or a model answers it, and a
/// probe's metric where the probe ran: those are checked by failed_requirements alone.
CLEF_API Status check_requirements(const std::vector<Requirement>& requirements,
                                   const LabelledSet& set, const EvalOptions& options,
                                   const ProbesRun& probes = {});

/// METRIC=DELTA (or DELTA for every metric): how far a metric may get worse than the baseline
/// before it fails (where: "--tolerance").
CLEF_API Result<std::map<std::string, double>> parse_tolerances(
    const std::vector<std::string>& flags);

/// An earlier report (a clef-eval/1 document, as to_json writes it) checked to be whole and of
/// the same data and questions.
class CLEF_API EvalBaseline {
 public:
  /// Refuses a document that is not a whole clef-eval/1 report of this data and these
  /// questions: another schema or digests, or any model, question or compared metric of the
  /// wrong shape (a metric is a number, an interval {value, low, high} or null). The error
  /// names the field (where: "--baseline").
  static Result<EvalBaseline> from_json(const nlohmann::ordered_json& document,
                                        const std::string& dataset_sha256,
                                        const std::string& questions_sha256);

  /// The checked document, its objects' keys sorted as to_json(EvalReport) sorts them.
  const nlohmann::json& document() const noexcept { return *m_document; }

 private:
  explicit EvalBaseline(std::shared_ptr<const nlohmann::json> document)
      : m_document(std::move(document)) {}
  std::shared_ptr<const nlohmann::json> m_document;
};

/// What comparing a report with its baseline found.
struct BaselineComparison {
  std::size_t compared = 0;        ///< Metrics read on both sides.
  std::vector<std::string> drops;  ///< Worse beyond the tolerance, or now undefined: failures.
  std::vector<std::string> notes;  ///< What was not compared, and why.
};

/// The metrics a baseline compares (accuracy, accuracy_answered, coverage, macro_f1, auroc,
/// within_1, brier, log_loss, ece, mae, rps, mean_iou, iou_at_least_half), per model and question
/// in both reports. A comparison of no metric at all is an error: it would prove nothing.
CLEF_API Result<BaselineComparison> compare_to_baseline(
    const EvalReport& report, const EvalBaseline& baseline,
    const std::map<std::string, double>& tolerances);

}  // namespace clef
