// clef: what changed between two runs over the same items, with no labels — yesterday's routing
// against today's after a model update, or one model against another (`clef diff`).
//
//     clef::Question team = clef::Question::choice("team", "Which team?", {{"billing", "Money"},
//                                                                           {"technical", "Bugs"}});
//     std::vector<std::string> ids = {"\"t1\""};           // as clef eval keys items
//     std::vector<const clef::Answer*> before = {nullptr};  // an item without an answer in A
//     std::vector<const clef::Answer*> after = {nullptr};
//     clef::QuestionDrift drift = clef::compare_answers(team, ids, before, after);
//     bool same = drift.agreement && drift.agreement->low >= 0.95;  // nothing compared: false
#pragma once

#include <cstddef>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "clef/decision.hpp"
#include "clef/eval_gates.hpp"
#include "clef/export.hpp"
#include "clef/metrics.hpp"
#include "clef/question.hpp"
#include "clef/result.hpp"

namespace clef {

/// An item whose winner is not the same in the two runs.
struct Flip {
  std::string id;
  std::string winner_a;  ///< Answer::winner() in run A
  double probability_a = 0;
  std::string winner_b;
  double probability_b = 0;
};

/// How many items each run gave one winner to.
struct WinnerCount {
  std::size_t a = 0;
  std::size_t b = 0;
};

/// One question's answers in run A against run B, over the items both runs answered (an answer
/// with a value: ok or abstained). Box questions are not compared (`compared` stays 0).
///
/// - agreement: items with the same winner / compared, with its Wilson interval;
/// - js_divergence: the Jensen–Shannon divergence between the two runs' distributions of
///   winners (counts over the compared items, each divided by `compared`), with base-2
///   logarithms, so it lies in [0, 1]: JSD(P, Q) = ½ KL(P ‖ M) + ½ KL(Q ‖ M), M = ½ (P + Q).
///   It is 0 when both runs give each winner equally often, even to different items: it measures
///   a shift in the mix, agreement measures the items;
/// - mean_abs_delta_p: the mean over compared items of |p_B(w) − p_A(w)|, where w is run A's
///   winner and p the probability each run gave it (a choice's option, a score's level,
///   P(true) for a yes/no question).
/// Every figure is nullopt when nothing was compared.
struct QuestionDrift {
  std::string question;
  QuestionType type = QuestionType::choice;
  std::size_t compared = 0;
  std::size_t only_a = 0;  ///< Items with a value in run A only.
  std::size_t only_b = 0;  ///< Items with a value in run B only.
  std::optional<metrics::Interval> agreement;
  std::optional<double> js_divergence;
  std::optional<double> mean_abs_delta_p;
  std::map<std::string, WinnerCount> winners;  ///< Over the compared items, by winner.
  std::vector<Flip> flips;                     ///< In item order.
};

/// `question`'s answers in two runs: ids[i], answers_a[i] and answers_b[i] are item i (nullptr =
/// no answer). The three vectors must be the same length; a shorter one counts the rest as
/// unanswered.
CLEF_API QuestionDrift compare_answers(const Question& question,
                                       const std::vector<std::string>& ids,
                                       const std::vector<const Answer*>& answers_a,
                                       const std::vector<const Answer*>& answers_b);

/// Two runs compared: what each names as its model (and its model's version, when its run
/// recorded one), the items, and every question.
struct RunDrift {
  std::string name_a;  ///< How run A is shown: its file, or a name given for it.
  std::string name_b;
  std::string model_a;  ///< The model run A's lines name ("" when they name none or several).
  std::string model_b;
  /// The version run A's server reported for its model ("clef-flash:latest@sha256:…", from the
  /// run record clef batch writes beside its output), "" when not known. Set by the caller.
  std::string model_version_a;
  std::string model_version_b;
  std::size_t items_a = 0;  ///< Items with a result in run A.
  std::size_t items_b = 0;
  std::size_t common = 0;  ///< Items with a result in both.
  std::vector<QuestionDrift> questions;
  /// Items whose every compared question has the same winner, over the items compared on every
  /// question (nullopt when there is none).
  std::optional<metrics::Interval> agreement;
};

/// Every question of `questions` compared over the items: ids[i] names item i, a[i] and b[i] are
/// its decisions in runs A and B (nullopt: no result, or the request failed). Sets everything but
/// the names; model_a and model_b are the models the decisions name when they all name one.
CLEF_API RunDrift compare_runs(const std::vector<Question>& questions,
                               const std::vector<std::string>& ids,
                               const std::vector<std::optional<Decision>>& a,
                               const std::vector<std::optional<Decision>>& b);

/// The Jensen–Shannon divergence (base 2, in [0, 1]) between two distributions given as counts
/// or weights over the same outcomes (p[k] and q[k] for outcome k; each normalised to sum 1).
/// nullopt when the sizes differ, a value is negative or not finite, or either sums to 0.
CLEF_API std::optional<double> jensen_shannon_divergence(const std::vector<double>& p,
                                                         const std::vector<double>& q);

/// The requirements (clef/eval_gates.hpp's syntax) against a comparison: QUESTION.METRIC with
/// METRIC one of agreement, js_divergence, mean_abs_delta_p, compared, flips; QUESTION may be
/// `overall` (agreement). lower()/upper() read agreement's interval. The failures as sentences;
/// an undefined metric fails with the reason; an unknown question or metric is an error.
CLEF_API Result<std::vector<std::string>> failed_drift_requirements(
    const std::vector<Requirement>& requirements, const RunDrift& drift);

/// The clef-diff/1 document: keys sorted, every flip listed, an undefined figure null.
CLEF_API nlohmann::json to_json(const RunDrift& drift);

}  // namespace clef
