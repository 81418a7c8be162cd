// Internal: a decision response object -> typed, validated answers.
#pragma once

#include <string>
#include <vector>

#include "clef/client.hpp"
#include "clef/decision.hpp"
#include "json_text.hpp"

namespace clef::detail {

/// Reads `{model, answers, usage}` (already out of any envelope). Fails only when the body as
/// a whole is unusable; a bad answer is reported in its Answer's status.
Result<Decision> parse_decision(const Json& body, const std::vector<Question>& questions,
                                const ValidationOptions& validation);

/// 1 − H(p)/ln N over `probabilities` (0 for N < 2); the one confidence clef shows.
double entropy_confidence(const std::vector<double>& probabilities);

}  // namespace clef::detail
