// Internal: OpenAI's POST /v1/decisions dialect (also Fireworks'): the same DecisionRequest as
// its request body, and its answers array read back as System One's answers map, so that one
// parser (wire_response) validates every server's answers the same way.
#pragma once

#include <string>
#include <vector>

#include "clef/decision.hpp"
#include "clef/request.hpp"
#include "util/json_text.hpp"

namespace clef::detail {

/// The body OpenAI's /v1/decisions takes: {"model", "input", "questions": [...]}, questions in
/// request order, each named. Limits are checked by the caller (serialize_request).
Result<std::string> openai_request_body(const DecisionRequest& request, const std::string& model);

/// An answer the translation already knows is bad (a boolean where clef asked strings, a name
/// that is not the question's), to be marked after parsing.
struct DialectProblem {
  std::string question;
  std::string problem;
};

/// {model, answers: [...], usage} as {model, answers: {NAME: ...}, usage}: predicate → noul,
/// choice and score probabilities arrays → maps keyed by label and level index, refusal kept.
/// Fails only when the body as a whole is unusable.
Result<Json> openai_body_as_systemone(const Json& body, const std::vector<Question>& questions,
                                      std::vector<DialectProblem>& problems);

}  // namespace clef::detail
