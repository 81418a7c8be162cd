// clef: the whole evaluation of one or more models on one labelled set, typed — what `clef eval`
// prints, writes as its clef-eval/1 JSON, gates on and fits a policy from.
//
//     #include <nlohmann/json.hpp>  // for to_json's document
//     clef::LabelledSet set;
//     set.questions = {clef::Question::yes_no("refund", "Asks for a refund?")};
//     set.items = {{"\"t1\"", {"yes"}}};  // the id's JSON text, and its gold label
//     clef::ItemResult failed;               // this item's request failed: it counts as wrong
//     failed.error_kind = "timeout";
//     clef::ModelResults flash{"clef-flash", {failed}, {}, {}};  // no --permute, no --repeat
//     clef::EvalReport report = clef::evaluate_models(set, {flash}, {});
//     bool ship = report.models[0].questions[0].accuracy->low >= 0.9;  // 0 of 1 right: false
//     std::string file = clef::dump_json(clef::to_json(report), 2);   // the clef-eval/1 file
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "clef/decision.hpp"
#include "clef/eval.hpp"
#include "clef/export.hpp"
#include "clef/metrics.hpp"
#include "clef/policy.hpp"
#include "clef/question.hpp"

namespace clef {

/// One labelled item: its id as the report keys it (for clef eval, the id's compact JSON text,
/// `"x001"` with its quotes, which in_fit_half splits on) and, per question of the set, its
/// gold label as gold_label gives it ("" = no gold for this item).
struct LabelledItem {
  std::string id;
  std::vector<std::string> gold;
};

/// The labelled questions and items, and the digests that tell this set from another: a
/// baseline or a policy measured on other data or questions is refused by them.
struct LabelledSet {
  std::vector<Question> questions;  ///< The labelled questions, in the order given.
  std::vector<LabelledItem> items;
  std::string dataset_sha256;    ///< Of the data's bytes.
  std::string questions_sha256;  ///< Of every question asked (questions_sha256).
};

/// What one item got from one model.
struct ItemResult {
  std::optional<Decision> decision;  ///< None: the request failed (`error` says how).
  std::string error_kind;            ///< The failure's kind as named ("not_found"), or "".
  std::string error;                 ///< The failure's message.
  double latency_ms = 0;             ///< The request's; 0 when it was not sent.
  bool sent = true;                  ///< False for a deduplicated copy of another item's answer.
};

/// One more pass of a model over the set, for the probes (clef/probes.hpp): the questions with
/// their options in other orders, or the same requests again. Items as in ModelResults.
struct ProbeRun {
  /// [q]: the labels of the set's question q in the order this pass sent them (option_orders);
  /// empty for a repeat, or for a question this pass sent as asked (it has fewer orders than
  /// there are passes): such a pass is not counted in that question's probe.
  std::vector<std::vector<std::string>> option_orders;
  std::vector<std::optional<ItemResult>> items;
};

/// One model's results, item by item in the set's order: nullopt where the item has none (a
/// results file that lacks it, a run that stopped).
struct ModelResults {
  std::string model;
  std::vector<std::optional<ItemResult>> items;
  /// Passes with the options in other orders (--permute): each choice's and score's
  /// QuestionEvaluation gets its PositionProbe, `items` being the order as asked.
  std::vector<ProbeRun> permuted;
  /// The same requests again (--repeat): each question gets its RepeatProbe, `items` being the
  /// first request.
  std::vector<ProbeRun> repeated;
};

/// How many items failed with one kind of error, and the first one's message (in item order).
struct FailureCount {
  std::size_t items = 0;
  std::string message;
};

/// Requests, latency and tokens of one model on the set.
struct ModelTraffic {
  std::size_t answered = 0;
  std::size_t failed = 0;
  std::size_t missing = 0;                       ///< Items without any result.
  std::map<std::string, FailureCount> failures;  ///< By error kind.
  std::optional<double> latency_p50_ms;          ///< Over the requests sent and answered.
  std::optional<double> latency_p95_ms;
  std::size_t latency_n = 0;
  std::int64_t input_tokens = 0;
  std::int64_t output_tokens = 0;
};

/// Every labelled question at once.
struct OverallScores {
  std::size_t items = 0;
  /// Items whose every labelled question was answered right, over the items with any gold.
  std::optional<metrics::Interval> all_correct;
  /// The mean of the questions' accuracies, over the questions with any gold answer.
  std::optional<double> mean_accuracy;
};

/// What one model's decisions on the set cost (Decision::cost), in dollars: over the requests
/// sent and answered (a deduplicated copy costs nothing again). A cache hit's $0 says nothing of
/// the model's price: it counts as unknown unless its cost was priced again (Client::cost_if_sent,
/// as clef eval does). Every figure but `known` and `unknown` is nullopt when no cost is known;
/// per_correct also when any cost is unknown (the total would be short) or no item is all right.
struct ModelCost {
  std::size_t known = 0;    ///< Decisions whose cost is known.
  std::size_t unknown = 0;  ///< Decisions whose cost is not.
  std::optional<double> total_usd;
  std::optional<double> per_item;     ///< The mean known cost of a decision.
  std::optional<double> per_1000;     ///< per_item × 1,000: dollars per 1,000 decisions.
  std::optional<double> per_correct;  ///< total / items whose every labelled question is right.
};

/// One model on the set. `questions[q]` and `thresholds[q]` are of the set's question q;
/// `thresholds` is empty unless thresholds were fitted.
struct ModelEvaluation {
  std::string model;
  ModelTraffic traffic;
  ModelCost cost;
  std::vector<QuestionEvaluation> questions;
  std::vector<std::vector<FittedThreshold>> thresholds;
  OverallScores overall;
};

/// The first model against another; `questions[q]` is of the set's question q.
struct ModelPairComparison {
  std::string a;
  std::string b;
  std::vector<ModelComparison> questions;
};

struct EvalOptions {
  bool fit_thresholds = false;
  double target_precision = 0.95;  ///< With fit_thresholds: see fit_thresholds().
};

/// The report: the set's identity, each model in the order given, and with several models the
/// first compared with each other one.
struct EvalReport {
  std::string dataset_sha256;
  std::string questions_sha256;
  std::size_t items = 0;
  std::vector<std::string> question_names;  ///< The set's questions, in its order.
  std::vector<QuestionType> question_types;
  std::optional<double> target_precision;  ///< Set when thresholds were fitted.
  std::vector<ModelEvaluation> models;
  std::vector<ModelPairComparison> comparisons;
};

/// Evaluates every model of `results` on `set` (evaluate_question per question, fit_thresholds
/// when asked, the traffic and the overall scores) and compares the first with each other one.
/// Each ModelResults holds one entry per item of the set; a shorter one counts the rest as
/// missing.
CLEF_API EvalReport evaluate_models(const LabelledSet& set,
                                    const std::vector<ModelResults>& results,
                                    const EvalOptions& options);

/// The clef-eval/1 document: keys sorted, no timestamps, so the same set and results give the
/// same bytes. Intervals are {"value", "low", "high"} objects and an undefined metric is null;
/// models are keyed by name (their order in "model_order"); the confusion matrix names a
/// missing answer "(no answer)".
CLEF_API nlohmann::json to_json(const EvalReport& report);

/// The thresholds fitted for `model` (fit_thresholds) as a policy file for `--policy`: a
/// label whose own threshold is undefined falls back to its question's, instead of abstaining
/// on every answer it wins.
CLEF_API Policy policy_of(const EvalReport& report, const ModelEvaluation& model);

}  // namespace clef
