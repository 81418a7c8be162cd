// clef eval's report for people: the terminal summary, the Markdown for a pull request, and
// the one-line account of failed requests both print.
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "clef/eval_report.hpp"
#include "clef/metrics.hpp"

namespace clef::cli {

/// Per model and question: n, coverage, accuracy with its interval, macro-F1, Brier, ECE with
/// its noise floor, a bar per label's F1; then each comparison.
void print_eval_summary(std::ostream& out, const EvalReport& report, bool color);

/// The numbers only its type has, as "  MAE 0.42  within-1 90.0%  RPS 0.081" ("" for a choice).
std::string extras(const QuestionEvaluation& q);

/// The same as Markdown tables.
std::string report_markdown(const EvalReport& report);

/// One model's failed requests as a sentence: "66 of 66 items failed: not_found 66 (model "x" is
/// not on this Ollama server: …)", each kind with its first message, then items without a
/// result; "" when every item got an answer.
std::string failure_summary(const ModelEvaluation& model);

/// What the model's decisions cost, as "cost $0.00039 in all · $0.0060 per 1,000 decisions ·
/// $0.0000071 per item all right (66 priced)"; "" when no decision's cost is known or unknown
/// (nothing was answered).
std::string cost_summary(const ModelEvaluation& model);

/// The report's questions in the order its JSON form lists them (by name), as indices into
/// report.question_names: every rendering lists them the same way.
std::vector<std::size_t> questions_by_name(const EvalReport& report);

/// A question's ECE with its noise floor, "0.042 (0.03)", or "n/a".
std::string ece_cell(const QuestionEvaluation& q);

/// "0.5 ms", or "n/a" when no request was timed.
std::string milliseconds(const std::optional<double>& value);

/// A label's precision and recall as the report states them: Wilson intervals.
std::optional<metrics::Interval> class_precision(const metrics::ClassScores& scores);
std::optional<metrics::Interval> class_recall(const metrics::ClassScores& scores);

/// The value of an interval that may be undefined.
std::optional<double> value_of(const std::optional<metrics::Interval>& interval);

/// A question type as people say it: "choice", "yes/no", "score", "box".
std::string type_name(QuestionType type);

/// "position (3 orders): flips 4.5% [1.6–12.5] of 66 items · winner by position 34.8% 33.3%
/// 31.8% · mean |Δp| 0.012" (clef eval --permute).
std::string position_summary(const PositionProbe& probe);
/// "repeat (3 requests): self-agreement 98.5% [91.9–99.7] of 66 items · spread 0.031".
std::string repeat_summary(const RepeatProbe& probe);

}  // namespace clef::cli
