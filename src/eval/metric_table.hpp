// Internal: a report's metrics as a typed table, read once from its clef-eval/1 form, for the
// gates that hold models to them (eval_gates.cpp).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "eval/report_json.hpp"

namespace clef::detail {

/// One metric as the report states it: a number (a count, a rate, a mean) or an interval; its
/// value undefined (null in the report) when a denominator was zero.
struct Metric {
  bool interval = false;
  std::optional<double> value;
  std::optional<double> low;   ///< An interval's lower bound.
  std::optional<double> high;  ///< An interval's upper bound.
};

/// The metrics of one place in a model's report: a question, one of its classes, or the
/// model's overall, latency_ms or cost.
struct MetricScope {
  std::string type;                            ///< A question's type ("choice", "noul"...).
  std::map<std::string, Metric> metrics;       ///< By name, as the report spells them.
  std::map<std::string, MetricScope> classes;  ///< A question's, by label.
  /// Members that are lists, not numbers (the probes' flips, winner shares, reliability).
  std::vector<std::string> lists;

  const Metric* metric(const std::string& name) const;
  /// A metric's value; nullopt when there is no such metric or it is undefined.
  std::optional<double> value(const std::string& name) const;
  /// A count the report states (n, answered, known), or 0.
  double count(const std::string& name) const;
};

/// One model's metrics.
struct ModelMetrics {
  std::string model;
  std::map<std::string, MetricScope> questions;
  MetricScope overall;
  MetricScope latency_ms;
  MetricScope cost;

  /// "overall", "latency_ms", "cost" or a question's scope; nullptr when there is none.
  const MetricScope* scope(const std::string& name) const;
};

/// A class's metrics where none could be scored (no item has a gold answer): every one undefined.
const MetricScope& unscored_class();

/// Each model's metrics in a clef-eval/1 document (to_json(EvalReport)), in the document's
/// order: the numbers its file shows, read once. What is not a metric (confusion, reliability,
/// the probes' flips, failures' messages) is not in it.
std::vector<ModelMetrics> metric_table(const SortedJson& report);

/// Why `metric` of `question` (or of its class `label`) is undefined in `model`: which
/// denominator is zero.
std::string undefined_reason(const ModelMetrics& model, const std::string& question,
                             const std::string& metric, const std::string& label);

}  // namespace clef::detail
