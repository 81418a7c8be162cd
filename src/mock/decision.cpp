// The simulated decision: each server's refusals, in their order, then the answers from the
// rules and the model, in the server's envelope.
#include "mock/decision.hpp"

#include <optional>
#include <string>

#include "util/json_text.hpp"

#include "clef/ollama.hpp"
#include "mock/answers.hpp"
#include "mock/checks.hpp"
#include "mock/error_bodies.hpp"
#include "mock/openai_profile.hpp"
#include "mock/profile.hpp"
#include "mock/rules.hpp"
#include "mock/typesafe_checks.hpp"

namespace clef::mock_detail {
namespace {

/// Workers AI's refusals: a path that is not its route (404), a missing or wrong token (401),
/// a model it does not serve or that differs from the body's (400).
std::optional<Reply> workers_ai_refusal(const MockSettings& s, const MockRequest& request,
                                        const std::string& model) {
  const MockProfile shape = MockProfile::workers_ai;
  // Straight (/client/v4/accounts/ACCOUNT/ai/run/…) or through AI Gateway
  // (/v1/ACCOUNT/GATEWAY/workers-ai/…, gateway.cpp): the same model path follows.
  const bool through_gateway = request.path.rfind("/v1/", 0) == 0;
  const std::string prefix =
      through_gateway ? "/workers-ai/@cf/cloudflare/" : "/ai/run/@cf/cloudflare/";
  const auto at = request.path.find(prefix);
  if ((!through_gateway && request.path.rfind("/client/v4/accounts/", 0) != 0) ||
      at == std::string::npos) {
    return error_reply(shape, 404, "No route for that URI", "7000");
  }
  if (!authorized(request.header("Authorization"), s.token)) {
    return error_reply(shape, 401, "Authentication error", "10000");
  }
  const std::string path_model = request.path.substr(at + prefix.size());
  if (!serves(s, shape, path_model)) return error_reply(shape, 400, "No such model", "5007");
  if (model != path_model) {
    return error_reply(shape, 400, "model in body must match the model in the URL", "5006");
  }
  return std::nullopt;
}

/// Ollama's refusals of a model: a chat model (400), one not pulled (404), an MLX or
/// Safetensors tag, pulled and even decision-capable, that it cannot serve there (400).
std::optional<Reply> ollama_refusal(const MockSettings& s, const std::string& model) {
  const MockProfile shape = MockProfile::ollama;
  if (is_other_model(s, shape, model)) {
    return error_reply(shape, 400, "\"" + model + "\" does not support decisions");
  }
  if (!serves(s, shape, model)) {
    return error_reply(shape, 404, "model \"" + model + "\" not found, try pulling it first");
  }
  // Pulled, even decision-capable, yet not servable there (protocol.md; the card).
  if (is_mlx_or_safetensors_tag(model)) {
    return error_reply(shape, 400,
                       "MLX models are not supported on /v1/systemone; use the default tag");
  }
  return std::nullopt;
}

/// TypeSafe's 422 names the field a problem is in (["body", "model"]); the other servers' codes
/// are their own, and none is given for them here.
std::string field_code(MockProfile shape, const std::string& problem) {
  if (shape != MockProfile::typesafe) return {};
  const std::string field = problem.substr(0, problem.find_first_of(".:["));
  for (const char* known :
       {"model", "state", "questions", "images", "audio", "videos", "keep_alive"}) {
    if (field == known) return field;
  }
  return {};
}

/// The first refusal `shape` makes of this request, in the order the server checks.
std::optional<Reply> refusal(MockProfile shape, const MockSettings& s, const MockRequest& request,
                             const Decoded& decoded) {
  if (decoded.too_large) {
    return error_reply(shape, 413, "request body must not exceed 64 KiB without images");
  }
  if (!decoded.body) return invalid_json_reply(shape, decoded.problem);
  const Json& body = *decoded.body;
  if (!body.is_object()) {
    return error_reply(shape, invalid_status(shape), "request body must be a JSON object");
  }
  const auto model_field = body.find("model");
  if (model_field != body.end() && !model_field->is_string()) {
    const std::string problem =
        "model: must be a string, not " + std::string(model_field->type_name());
    return error_reply(shape, invalid_status(shape), problem, field_code(shape, problem));
  }
  std::optional<Reply> refused;
  if (shape == MockProfile::workers_ai) refused = workers_ai_refusal(s, request, decoded.model);
  if (shape == MockProfile::ollama) refused = ollama_refusal(s, decoded.model);
  if (refused) return refused;
  if (auto problem = check_body(shape, body); !problem.empty()) {
    return error_reply(shape, invalid_status(shape), problem, field_code(shape, problem));
  }
  if (shape == MockProfile::typesafe) return typesafe_refusal(request, body, decoded.model);
  return std::nullopt;
}

/// OpenAI's refusals: no or a wrong key (401), then its schema's first problem (400).
std::optional<Reply> openai_refusal(const MockSettings& s, const MockRequest& request,
                                    const Json& body) {
  const MockProfile shape = MockProfile::openai;
  if (!authorized(request.header("Authorization"), s.token)) {
    return error_reply(shape, 401,
                       "Incorrect API key provided. You can find your API key at "
                       "https://platform.openai.com/account/api-keys.");
  }
  if (const auto problem = check_openai_body(body)) {
    return error_reply(shape, 400, problem->message, problem->param);
  }
  if (!serves(s, shape, clef::detail::string_field(body, "model"))) {
    return error_reply(shape, 404,
                       "The model `" + clef::detail::string_field(body, "model") +
                           "` does not exist or you do not have access to it.",
                       "model_not_found");
  }
  return std::nullopt;
}

}  // namespace

Reply simulate(MockProfile shape, const MockSettings& s, const MockRequest& request,
               std::size_t body_bytes, const Decoded& decoded, int call) {
  if (shape == MockProfile::openai) {
    if (decoded.too_large || !decoded.body) return invalid_json_reply(shape, decoded.problem);
    if (auto refused = openai_refusal(s, request, *decoded.body)) return std::move(*refused);
    Reply reply;
    reply.body = openai_decision(s, decoded, body_bytes, call);
    return reply;
  }
  if (auto refused = refusal(shape, s, request, decoded)) return std::move(*refused);
  const std::string& model = decoded.model;
  const Flaws flaws{s.faults.position_bias, s.faults.noise, s.faults.seed, call};
  Json answers = Json::object();
  for (const auto& [name, q] : (*decoded.body)["questions"].items()) {
    answers[name] = answer_for(shape, decoded.state_json, name, q,
                               rule_for(s.rules, model, name, decoded.state_text), flaws);
  }
  Reply reply;
  reply.body = decision_body(shape, model, std::move(answers), body_bytes);
  return reply;
}

}  // namespace clef::mock_detail
