// clef: confidence thresholds fitted by `clef eval --fit-thresholds`, applied to new answers so
// confident ones are routed and the rest go to a person.
//
//     std::string text = R"({"schema": "clef-policy/1", "model": "clef-flash",
//                            "questions": {"refund": {"threshold": 0.9}}})";
//     auto policy = clef::Policy::parse(text, "policy.json");
//     auto decision = client.decide(request);
//     if (policy && decision) policy->apply(decision.value());
//     // An answer below 0.9 is now AnswerStatus::abstained: send that ticket to a person.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "clef/decision.hpp"
#include "clef/export.hpp"
#include "clef/question.hpp"
#include "clef/result.hpp"

namespace clef {

/// The probability an answer is held to: the winner's (for yes/no, max(P(true), 1 − P(true)),
/// the side evaluation predicts); 0 for an answer without a value.
CLEF_API double trusted_probability(const Answer& answer) noexcept;

/// One question's thresholds. A threshold of nullopt means no probability reached the target
/// precision: every answer abstains.
struct QuestionPolicy {
  std::optional<double> threshold;  ///< For any winner without its own label threshold.
  std::map<std::string, std::optional<double>> labels;  ///< choice: per winning label
};

/// The policy file (schema "clef-policy/1"), for example
///   {"schema": "clef-policy/1", "model": "clef-flash", "target_precision": 0.95,
///    "dataset_sha256": "…", "questions_sha256": "…",
///    "questions": {"team": {"threshold": 0.8, "labels": {"billing": 0.7, "other": null}}}}
struct CLEF_API Policy {
  std::string model;  ///< The model the thresholds were measured on; never empty in a file.
  double target_precision = 0;
  std::string dataset_sha256;
  std::string questions_sha256;
  std::map<std::string, QuestionPolicy> questions;

  /// Reads a policy file's text; errors name `where` and the field at fault. A policy names its
  /// model ("model", a non-empty string): a threshold holds only for the model it was fitted on.
  static Result<Policy> parse(std::string_view text, const std::string& where);
  /// The file's text: sorted keys, so the same policy is the same bytes.
  std::string to_json() const;

  /// Refuses the policy for `questions` asked of `model_name` when it was fitted for other
  /// questions (questions_sha256) or another model, names a question that is not asked, or
  /// has a label threshold for a label that is not an option of its choice question.
  Status check(const std::vector<Question>& questions, const std::string& model_name) const;

  /// The asked questions the policy has no threshold for: their answers are never abstained.
  std::vector<std::string> uncovered(const std::vector<Question>& questions) const;

  /// Marks every ok answer whose trusted_probability is below its threshold as
  /// AnswerStatus::abstained, keeping its value and recording the threshold; returns how many.
  std::size_t apply(Decision& decision) const;
};

}  // namespace clef
