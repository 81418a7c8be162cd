// clef eval's CI gates: --require expressions and --baseline comparisons, both read from the
// clef-eval/1 report so a gate sees exactly the numbers the report shows.
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

/// A malformed requirement is an invalid_input error quoting it.
Result<Requirement> parse_requirement(const std::string& text);

/// Each requirement against every model of the report: the failures as sentences. A requirement
/// naming what the report does not have (an unknown question, auroc of a choice question) is an
/// error, not a failure.
Result<std::vector<std::string>> failed_requirements(const std::vector<Requirement>& requirements,
                                                     const nlohmann::json& report);

/// --tolerance METRIC=DELTA (or DELTA for every metric): how far a metric may get worse than
/// the baseline before it fails.
Result<std::map<std::string, double>> parse_tolerances(const std::vector<std::string>& flags);

/// The metrics a baseline compares, per model and question in both reports: each drop beyond
/// its tolerance as a sentence. A baseline of other data or questions is refused.
Result<std::vector<std::string>> baseline_drops(const nlohmann::json& report,
                                                const nlohmann::json& baseline,
                                                const std::map<std::string, double>& tolerances);

}  // namespace clef::cli
