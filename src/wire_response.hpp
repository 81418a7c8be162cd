// Internal: a decision response object -> typed, validated answers.
#pragma once

#include <string>
#include <vector>

#include "clef/decision.hpp"
#include "clef/options.hpp"
#include "json_text.hpp"

namespace clef::detail {

/// Reads `{model, answers, usage}` (already out of any envelope). Fails only when the body as
/// a whole is unusable; a bad answer is reported in its Answer's status. `body_text` is the
/// text `body` was parsed from: each Answer::raw_json is cut from it, as the server sent it.
Result<Decision> parse_decision(const Json& body, std::string_view body_text,
                                const std::vector<Question>& questions,
                                const ValidationOptions& validation);

/// `value` as a whole number of tokens: negative, fractional or out-of-range counts saturate
/// to [0, INT64_MAX] instead of overflowing.
std::int64_t token_count(double value);

/// 1 − H(p)/ln N over `probabilities` (0 for N < 2); the one confidence clef shows.
double entropy_confidence(const std::vector<double>& probabilities);

}  // namespace clef::detail
