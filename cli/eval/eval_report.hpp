// clef eval's report: the typed evaluations of every model turned into the clef-eval/1 JSON
// document every other output (terminal, Markdown, HTML, gates, baselines) reads.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "batch/batch_results.hpp"
#include "clef/eval.hpp"

namespace clef::cli {

/// One labelled item of DATA: its id key (id_key) and, per labelled question, its gold label as
/// clef::gold_label gives it ("" = none).
struct EvalItem {
  std::string key;
  std::vector<std::string> gold;
};

struct EvalData {
  std::vector<Question> questions;  ///< The labelled questions, in --label order.
  std::vector<EvalItem> items;
  std::string dataset_sha256;    ///< Of DATA's bytes.
  std::string questions_sha256;  ///< Of every question asked (clef::questions_sha256).
};

struct ModelRun {
  std::string model;
  BatchResults results;
};

struct ReportOptions {
  bool fit_thresholds = false;
  double target_precision = 0.95;
};

/// The report (schema "clef-eval/1"): keys sorted, no timestamps, so the same data and results
/// give the same bytes. Intervals are {"value", "low", "high"} objects.
nlohmann::json build_report(const EvalData& data, const std::vector<ModelRun>& runs,
                            const ReportOptions& options);

/// A number of the report: `object[key]`, or its "value" when it is an interval; nullopt when
/// it is absent or null (undefined).
std::optional<double> report_number(const nlohmann::json& object, const char* key);

/// One row of the report's comparison: model a against model b on one question.
struct ComparisonRow {
  std::string a, b, question;
  /// accuracy(a) − accuracy(b) and its interval; nullopt when no item has a gold answer.
  std::optional<double> difference, low, high;
  std::optional<double> mcnemar_p;
  std::optional<double> flip_rate;
  std::size_t only_a_right = 0, only_b_right = 0;
};
std::vector<ComparisonRow> comparison_rows(const nlohmann::json& report);

/// One model's failed requests as a sentence: "66 of 66 items failed: not_found 66 (model "x" is
/// not on this Ollama server: …)", each kind with its first message, then items the results lack;
/// "" when every item got an answer.
std::string failure_summary(const nlohmann::json& model);

/// The report's models in the order they were given (its "model_order"), for printing.
std::vector<std::string> model_order(const nlohmann::json& report);

/// The report as its file holds it.
std::string report_text(const nlohmann::json& report);

}  // namespace clef::cli
