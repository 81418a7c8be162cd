// Internal: DecisionRequest -> the exact wire JSON one backend expects.
#pragma once

#include <string>

#include "clef/backend.hpp"
#include "clef/options.hpp"
#include "clef/request.hpp"
#include "model/question_wire.hpp"

namespace clef::detail {

/// Validates `request` (questions, images, fields) for `backend` and writes the compact body.
/// `model` is the name that goes into the body (already bare for Workers AI).
Result<std::string> serialize_request(const DecisionRequest& request, Backend backend,
                                      const std::string& model);

/// The same, for a request whose questions are `questions.questions`, already validated and
/// written (QuestionMemo): only what differs per request is checked and written.
Result<std::string> serialize_request(const DecisionRequest& request, Backend backend,
                                      const std::string& model, const PreparedQuestions& questions);

/// Where a decision about `model` goes: {base}/v1/systemone, OpenAI's {base}/decisions, or
/// Workers AI's per-account path for the model (its gateway's, through AI Gateway). A model
/// the body would refuse still gets its URL, as asked, for messages.
std::string decision_url(const ClientOptions& options, const std::string& base_url,
                         const std::string& model);

/// The model as `backend`'s body names it: as given, or bare for Workers AI ("@cf/…" and the
/// short forms, refused when it is neither).
Result<std::string> body_model_name(Backend backend, const std::string& model);

}  // namespace clef::detail
