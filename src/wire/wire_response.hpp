// Internal: a decision response object -> typed, validated answers.
#pragma once

#include <string>
#include <vector>

#include "clef/backend.hpp"
#include "clef/decision.hpp"
#include "clef/options.hpp"
#include "clef/transport.hpp"
#include "util/json_text.hpp"
#include "util/redact.hpp"

namespace clef::detail {

/// Reads `{model, answers, usage}` (already out of any envelope). Fails only when the body as
/// a whole is unusable; a bad answer is reported in its Answer's status. `body_text` is the
/// text `body` was parsed from: each Answer::raw_json is cut from it, as the server sent it.
Result<Decision> parse_decision(const Json& body, std::string_view body_text,
                                const std::vector<Question>& questions,
                                const ValidationOptions& validation);

/// A 2xx response as `backend` sends it (Workers AI's envelope removed), read by
/// parse_decision, with its request id and raw_json set. The one reading of a success, shared by
/// the client and the cache (which stores only what it reads as a valid answer). An error carries
/// the response's status and request id; `secret` is redacted from server text in errors only.
Result<Decision> read_decision(Backend backend, const HttpResponse& response,
                               const std::vector<Question>& questions,
                               const ValidationOptions& validation, const Secrets& secret);

/// OpenAI's answers array, translated (openai_dialect.hpp) and read by parse_decision; the
/// translation's own findings (a boolean value, another question's name) mark their answers, and
/// each answer's raw_json is the server's own.
Result<Decision> read_openai_decision(const Json& body, const std::vector<Question>& questions,
                                      const ValidationOptions& validation);

/// `value` as a whole number of tokens: negative, fractional or out-of-range counts saturate
/// to [0, INT64_MAX] instead of overflowing.
std::int64_t token_count(double value);

/// 1 − H(p)/ln N over `probabilities` (0 for N < 2); the one confidence clef shows.
double entropy_confidence(const std::vector<double>& probabilities);

}  // namespace clef::detail
