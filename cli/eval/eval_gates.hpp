// clef eval's CI gates: --require expressions and --baseline comparisons, both read from the
// clef-eval/1 report so a gate sees exactly the numbers the report shows. A gate never passes on
// a metric that is undefined (null in the report) or on a comparison of nothing.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "clef/result.hpp"

namespace clef::cli {

/// One --require: `[lower(|upper(]QUESTION.METRIC[[LABEL]][)] OP NUMBER`, OP one of >= > <= < ==
/// !=. QUESTION may be `overall` (all_correct, mean_accuracy) or `latency_ms` (p50, p95);
/// LABEL picks a class (precision, recall, f1, support). lower()/upper() read an interval's
/// bound.
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
/// error quoting it. Read by hand in one pass: time linear in its length, whatever it holds.
Result<Requirement> parse_requirement(const std::string& text);

/// Each requirement against every model of the report: the failures as sentences. A metric the
/// report has as null (undefined) fails, with the reason ("team.brier is undefined: no item was
/// answered"). A requirement naming what the report does not have (an unknown question, auroc
/// of a choice question) is an error, not a failure.
Result<std::vector<std::string>> failed_requirements(const std::vector<Requirement>& requirements,
                                                     const nlohmann::json& report);

/// --tolerance METRIC=DELTA (or DELTA for every metric): how far a metric may get worse than
/// the baseline before it fails.
Result<std::map<std::string, double>> parse_tolerances(const std::vector<std::string>& flags);

/// Refuses a --baseline that is not a whole clef-eval/1 report of this data and these questions:
/// another schema or hashes, or any model, question or compared metric of the wrong shape
/// (a metric is a number, an interval {value, low, high} or null). The error names the field.
Status check_baseline(const nlohmann::json& baseline, const std::string& dataset_sha256,
                      const std::string& questions_sha256);

/// What comparing a report with its baseline found.
struct BaselineComparison {
  std::size_t compared = 0;        ///< Metrics read on both sides.
  std::vector<std::string> drops;  ///< Worse beyond the tolerance, or now undefined: failures.
  std::vector<std::string> notes;  ///< What was not compared, and why.
};

/// The metrics a baseline compares, per model and question in both reports (after
/// check_baseline). A comparison of no metric at all is an error: it would prove nothing.
Result<BaselineComparison> compare_to_baseline(const nlohmann::json& report,
                                               const nlohmann::json& baseline,
                                               const std::map<std::string, double>& tolerances);

}  // namespace clef::cli
