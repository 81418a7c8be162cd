// clef: how well a model answers one question on labelled items — the typed report behind
// `clef eval`, for applications that gate themselves.
//
//     clef::Question refund = clef::Question::yes_no("refund", "Asks for a refund?");
//     std::vector<std::string> gold = {clef::gold_label(refund, "Yes").value()};  // "yes"
//     std::vector<const clef::Answer*> answers = {nullptr};  // no answer: counts as wrong
//     clef::QuestionEvaluation result = clef::evaluate_question(refund, gold, answers);
//     bool ship = result.accuracy && result.accuracy->low >= 0.9;  // 0 of 1 right: false
//     bool calibrated = result.brier && result.brier->value < 0.1;  // nothing answered: false
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "clef/decision.hpp"
#include "clef/export.hpp"
#include "clef/metrics.hpp"
#include "clef/probes.hpp"
#include "clef/question.hpp"
#include "clef/result.hpp"

namespace clef {

/// A gold answer as people write it, as the label Answer::winner() would give: a choice label
/// (exactly); for yes/no "true", "yes", "1" → "yes" and "false", "no", "0" → "no" (any case);
/// for a score a level's label or its index → the label; for a box "top,bottom,left,right"
/// (fractions, top < bottom, left < right) → the same edges in Answer::winner()'s form. Empty (or
/// only white space) is "": no gold for this item. Anything else is an error naming the valid
/// answers.
CLEF_API Result<std::string> gold_label(const Question& question, std::string_view written);

/// One question over a set of items.
///
/// Rates (coverage, accuracy, within_1) carry Wilson intervals; means of per-item scores carry
/// bootstrap intervals. An item without an answer (the request failed, or the answer is not ok)
/// counts in `n` and as wrong in `accuracy`, and is left out of the scores that need
/// probabilities (Brier, log loss, ECE, AUROC, MAE, RPS), which are over answered items.
///
/// A metric is std::nullopt when it is undefined: the rates over n when n is 0, everything over
/// answered items when none was answered, AUROC when the answered items' gold is all one class.
/// The type-specific ones are also nullopt for the other question types.
struct QuestionEvaluation {
  std::string question;
  QuestionType type = QuestionType::choice;
  std::size_t n = 0;        ///< Items with a gold answer.
  std::size_t skipped = 0;  ///< Items without one (not counted anywhere else).
  std::size_t answered = 0;
  std::optional<metrics::Interval> coverage;           ///< answered / n
  std::optional<metrics::Interval> accuracy;           ///< correct / n
  std::optional<metrics::Interval> accuracy_answered;  ///< correct / answered
  std::optional<double> macro_f1;  ///< Over the union of gold and predicted labels.
  std::map<std::string, metrics::ClassScores> classes;
  metrics::Confusion confusion;            ///< gold → predicted ("" = no answer) → count
  std::optional<metrics::Interval> brier;  ///< Σₖ (pₖ − yₖ)² (yes/no: (p − y)²), mean over items
  std::optional<metrics::Interval> log_loss;  ///< −ln max(p_gold, 1e−15), mean over items
  std::optional<double> ece;                  ///< 15 equal-width bins of the winner's probability
  std::optional<double> ece_noise_floor;      ///< 1/√answered: an ECE below it is noise
  std::vector<metrics::CalibrationBin> reliability;
  std::optional<double> auroc;                ///< yes/no: of P(true) against gold "yes"
  std::optional<metrics::Interval> mae;       ///< score: |Σ i·pᵢ − gold index|
  std::optional<metrics::Interval> within_1;  ///< score: most likely level within 1 of gold
  std::optional<metrics::Interval> rps;       ///< score: ranked probability score
  /// box: the intersection over union with the gold box, mean over the answered items. A box is
  /// right (accuracy, ECE, comparisons) when its IoU is at least 0.5; boxes have no confusion
  /// matrix, Brier score or log loss.
  std::optional<metrics::Interval> mean_iou;
  std::optional<metrics::Interval> iou_at_least_half;  ///< box: answered items with IoU ≥ 0.5
  /// Set when the options were also sent in other orders (clef eval --permute; a choice or a
  /// score), over every item of the set, labelled or not.
  std::optional<PositionProbe> position;
  /// Set when each request was sent more than once (clef eval --repeat).
  std::optional<RepeatProbe> repeat;
};

/// Evaluates `question` where gold[i] is item i's gold label as gold_label gives it ("" = none)
/// and answers[i] its answer (nullptr = none). A yes/no prediction is "yes" at P(true) ≥ 0.5; a
/// box's gold is "top,bottom,left,right".
CLEF_API QuestionEvaluation evaluate_question(const Question& question,
                                              const std::vector<std::string>& gold,
                                              const std::vector<const Answer*>& answers);

/// Two models on the same items of one question. The intervals are nullopt when n is 0.
struct ModelComparison {
  std::size_t n = 0;  ///< Items with a gold answer.
  /// accuracy(A) − accuracy(B), with a paired bootstrap interval over the items.
  std::optional<metrics::Interval> accuracy_difference;
  std::size_t only_a_right = 0;
  std::size_t only_b_right = 0;
  double mcnemar_p = 1;  ///< McNemar's exact test on only_a_right vs only_b_right
  /// Items whose winner differs (no answer counts as a winner).
  std::optional<metrics::Interval> flip_rate;
};

/// Compares answers_a and answers_b (as in evaluate_question) item by item.
CLEF_API ModelComparison compare_question(const Question& question,
                                          const std::vector<std::string>& gold,
                                          const std::vector<const Answer*>& answers_a,
                                          const std::vector<const Answer*>& answers_b);

/// The deterministic half of the items thresholds are fitted on: the first byte of SHA-256(id)
/// is even. The other half verifies them. `clef eval` passes the id as compact JSON text
/// (`"x001"` with its quotes, `7` for a number).
CLEF_API bool in_fit_half(std::string_view id);

/// A confidence threshold on one question (label empty) or on one choice label: answers whose
/// winner probability is at least `threshold` are trusted. Without a threshold every figure
/// measured at it is nullopt too.
struct FittedThreshold {
  std::string label;                      ///< "" for the whole question
  std::optional<double> threshold;        ///< None when no threshold reaches the target
  std::optional<double> fit_precision;    ///< On the fit half, at the threshold
  std::optional<double> fit_lower_bound;  ///< Its one-sided 95% Wilson lower bound (≥ target)
  std::optional<double> fit_coverage;     ///< Share of the fit half's items at or above it
  /// The same threshold on the other half; nullopt when none of its answers reaches it.
  std::optional<double> check_precision;
  std::optional<double> check_coverage;  ///< nullopt when the other half has no items
  std::size_t fit_n = 0;
  std::size_t check_n = 0;
};

/// For the question and, for a choice, each label: the lowest winner probability whose precision
/// on the fit half meets `target_precision` by its one-sided 95% Wilson lower bound. `ids` name
/// the items (in_fit_half splits them); gold and answers are as in evaluate_question.
CLEF_API std::vector<FittedThreshold> fit_thresholds(const Question& question,
                                                     const std::vector<std::string>& ids,
                                                     const std::vector<std::string>& gold,
                                                     const std::vector<const Answer*>& answers,
                                                     double target_precision);

}  // namespace clef
