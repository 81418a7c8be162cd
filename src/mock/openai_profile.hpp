// Internal: the mock's OpenAI POST /v1/decisions — the request as OpenAI's schema checks it
// (openai-python's decision_create_params.py, public beta), and the same simulated model's answers
// in its shape: an answers array in question order, typed choice values, per-question refusals.
#pragma once

#include <optional>
#include <string>

#include "mock/request_body.hpp"
#include "mock/settings.hpp"

namespace clef::mock_detail {

/// The first problem OpenAI's validation reports, with the parameter it names ("questions[1].
/// choices"), or nullopt.
struct OpenAiProblem {
  std::string message;
  std::string param;
};
std::optional<OpenAiProblem> check_openai_body(const Json& body);

/// What rules match and the default model reads: a string input, or its messages' text parts
/// joined by newlines.
std::string openai_input_text(const Json& input);

/// {model, answers: [...], usage} for a body check_openai_body passed. A rule answering
/// "refusal" (on a question with no such option) makes that question's answer a refusal.
Json openai_decision(const MockSettings& s, const Decoded& decoded, std::size_t body_bytes,
                     int call);

}  // namespace clef::mock_detail
