// Internal: what an answer says of one label, shared by the label-free comparisons (drift.cpp)
// and the probes (probes.cpp).
#pragma once

#include <optional>
#include <string>

#include "clef/decision.hpp"

namespace clef::detail {

/// The probability `answer` gives to `label` (a choice's option, a score level's label); for a
/// yes/no question P(true), whatever the label. nullopt when the answer has no such option.
inline std::optional<double> probability_of(const Answer& answer, const std::string& label) {
  if (const auto* choice = answer.choice()) {
    for (const auto& option : choice->probabilities)
      if (option.label == label) return option.probability;
    return std::nullopt;
  }
  if (const auto* yes_no = answer.yes_no()) return yes_no->p_true;
  if (const auto* score = answer.score()) {
    for (std::size_t level = 0; level < score->labels.size(); ++level) {
      if (score->labels[level] == label && level < score->probabilities.size())
        return score->probabilities[level];
    }
  }
  return std::nullopt;
}

/// answers[i] when it holds a value (ok or abstained), else nullptr.
inline const Answer* valued(const std::vector<const Answer*>& answers, std::size_t i) {
  const Answer* answer = i < answers.size() ? answers[i] : nullptr;
  return answer && answer->has_value() ? answer : nullptr;
}

}  // namespace clef::detail
